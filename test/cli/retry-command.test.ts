import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter, type CliResult } from '../helpers/porter-cli.js';

let pipeline: Pipeline;
let dir: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  dir = await mkdtemp(join(tmpdir(), 'porter-retry-'));
});
afterAll(async () => {
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

function porter(args: string[]): Promise<CliResult> {
  return runPorter(args, pipeline.childEnv());
}

describe('porter retry', () => {
  it('never sends a duplicate row: row 121 repeats row 11, and the retry leaves it out and says so', async () => {
    const rows: string[][] = [];
    for (let row = 1; row <= 120; row += 1) {
      rows.push([`feed.user${row}`, 'Ann', `Person${row}`, `user${row}@example.com`, '']);
    }
    rows[10] = ['whartmann', 'Wim', 'Hartmann', 'whartmann@example.com', ''];
    // row 60 names a group created only after the import: a failure a retry can mend
    rows[59] = ['feed.user60', 'Ann', 'Person60', 'user60@example.com', 'Feed Later'];
    rows.push(['whartmann', 'Greta', 'Schwarz', 'gschwarz@example.com', '']);
    const file = join(dir, 'feed.csv');
    await writeFile(file, csv(['username', 'firstName', 'lastName', 'email', 'groups'], rows));

    const first = await porter([
      'import',
      file,
      '--resource',
      'users',
      '--mode',
      'upsert',
      '--wait',
    ]);
    expect(first.code).toBe(2);
    const importId = first.stdout.trim().split('\n')[0]!;
    const failed = (await pipeline.results(importId)).filter((r) => r.status === 'failed');
    expect(failed.map((r) => [r.row, r.errorCode])).toEqual([
      [60, 'PORTER_GROUP_UNRESOLVED'],
      [121, 'PORTER_ROW_INVALID'],
    ]);
    expect(failed[1]!.error).toMatch(/duplicate of row 11/);

    const client = pipeline.context.createAdminClient();
    await client.postGroups([{ name: 'Feed Later' }]);
    await client.close();

    const retried = await porter(['retry', importId, '--wait']);
    expect(retried.code).toBe(0);
    const retryId = retried.stdout.trim();
    expect(retried.stderr).toContain(
      'left out 1 failed record that would fail again or overwrite another record (1 PORTER_ROW_INVALID)',
    );
    expect(retried.stderr).toMatch(/completed: 1 records, 1 succeeded/);
    expect((await pipeline.results(retryId)).map((r) => [r.sourceRow, r.key])).toEqual([
      [60, 'feed.user60'],
    ]);
    // the other person is not overwritten
    expect(pipeline.sandbox.store.userByName('whartmann')).toMatchObject({
      firstName: 'Wim',
      lastName: 'Hartmann',
      email: 'whartmann@example.com',
    });
  });
});
