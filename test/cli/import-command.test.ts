import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter, type CliResult } from '../helpers/porter-cli.js';

let pipeline: Pipeline;
let dir: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  dir = await mkdtemp(join(tmpdir(), 'porter-cli-'));
});
afterAll(async () => {
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

function porter(args: string[]): Promise<CliResult> {
  return runPorter(args, pipeline.childEnv());
}

describe('porter import', () => {
  it('prints the id at once, follows with --wait, writes the report, exits 0 when all succeeded', async () => {
    const file = join(dir, 'ok.csv');
    await writeFile(file, csv(['username', 'email'], [['cli.one', 'one@example.com']]));
    const report = join(dir, 'ok-report.csv');
    const result = await porter([
      'import',
      file,
      '--resource',
      'users',
      '--mode',
      'create',
      '--wait',
      '--report',
      report,
    ]);
    expect(result.code).toBe(0);
    const importId = result.stdout.trim().split('\n')[0]!;
    expect(importId).toMatch(/^imp_/);
    expect(result.stderr).toMatch(/completed: 1 records, 1 succeeded/);
    expect(await readFile(report, 'utf8')).toMatch(/cli\.one/);

    const status = await porter(['status', importId, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ id: importId, state: 'completed' });
  });

  it('exits 2 when some records did not succeed, and `porter report --status failed` lists them', async () => {
    const file = join(dir, 'some-bad.csv');
    await writeFile(file, 'username,email\ncli.two,two@example.com\n,nobody@example.com\n');
    const result = await porter([
      'import',
      file,
      '--resource',
      'users',
      '--mode',
      'create',
      '--wait',
    ]);
    expect(result.code).toBe(2);
    const importId = result.stdout.trim().split('\n')[0]!;
    const failed = await porter(['report', importId, '--status', 'failed', '--format', 'json']);
    const rows = JSON.parse(failed.stdout) as { row: number; field: string }[];
    expect(rows).toEqual([expect.objectContaining({ row: 2, field: 'username' })]);
  });

  it('exits 1 when the import itself failed, with one clear line', async () => {
    const file = join(dir, 'unknown-column.csv');
    await writeFile(file, csv(['username', 'favouriteColour'], [['x', 'blue']]));
    const result = await porter([
      'import',
      file,
      '--resource',
      'users',
      '--mode',
      'create',
      '--wait',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^imp_\w+$/m);
    expect(result.stderr).toMatch(/favouriteColour.*\[PORTER_INPUT_UNKNOWN_COLUMN\]/);
    const id = result.stdout.trim();
    expect(await pipeline.context.store.get(id)).toMatchObject({ state: 'failed' });
  });

  it('refuses a request that cannot work before any import is stored for it (exit 64)', async () => {
    const file = join(dir, 'acls.csv');
    await writeFile(file, csv(['name', 'groupId'], [['Read', '1']]));
    const result = await porter(['import', file, '--resource', 'acls', '--mode', 'delete']);
    expect(result.code).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/ACLs cannot be deleted.*\[PORTER_USAGE\]/);
    const missing = await porter([
      'import',
      join(dir, 'nope.csv'),
      '--resource',
      'users',
      '--mode',
      'create',
    ]);
    expect(missing.code).toBe(66);
    expect(missing.stderr).toMatch(/nope\.csv: cannot read it \(ENOENT\) \[PORTER_NOT_FOUND\]/);
  });

  it('a bad option value stops with a message naming it', async () => {
    const result = await porter(['import', 'x.csv', '--resource', 'robots', '--mode', 'create']);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/--resource must be one of users, groups, acls/);
  });

  it('says in one line when no Redis answers', async () => {
    const failed = await runPorter(['status', 'imp_x'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(failed.code).toBe(69);
    expect(failed.stderr.trim()).toMatch(
      /^porter: no Redis answers at redis:\/\/127\.0\.0\.1:1.*start one.*\[PORTER_REDIS_UNAVAILABLE\]$/,
    );
  });
});
