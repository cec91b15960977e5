/**
 * A `;`-delimited file whose lists are split by `,`: a name holding a likely separator that
 * names no record says how to set the separator, and a mapping file can set it (and the
 * delimiter) for every import that uses it; an option given with the import wins.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClient } from '../../src/admin/client.js';
import { parseImportFields } from '../../src/http/import-request.js';
import { runPorter } from '../helpers/porter-cli.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let client: AdminClient;
let dir: string;
const FEED = 'username;groups\nsep.ann;Staff,Legal\nsep.bob;Staff\n';

beforeAll(async () => {
  pipeline = await startPipeline();
  client = pipeline.context.createAdminClient();
  await client.postGroups([{ name: 'Staff' }, { name: 'Legal' }]);
  dir = await mkdtemp(join(tmpdir(), 'porter-separator-'));
});
afterAll(async () => {
  await client?.close();
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('lists split by another separator', () => {
  it('a name holding "," that names no group says how to set the list separator', async () => {
    const { results } = await pipeline.run(FEED, { resource: 'users', mode: 'upsert' });
    expect(results[0]).toMatchObject({ status: 'failed', errorCode: 'PORTER_GROUP_UNRESOLVED' });
    expect(results[0]!.error).toContain(
      'group "Staff,Legal" does not exist; if "," separates a list here, set the list separator to "," (--list-separator, or "listSeparator" in the mapping file)',
    );
    expect(results[1]).toMatchObject({ status: 'succeeded' });
  });

  it('the mapping file sets listSeparator and delimiter; a command-line option wins', async () => {
    const input = join(dir, 'feed.csv');
    await writeFile(input, FEED.replaceAll('sep.', 'map.'));
    const mapping = join(dir, 'mapping.json');
    await writeFile(mapping, JSON.stringify({ listSeparator: ',', delimiter: ';' }));
    const args = ['import', input, '--resource', 'users', '--mode', 'upsert', '--map', mapping];
    const run = await runPorter([...args, '--wait'], pipeline.childEnv());
    expect(run.code, run.stderr).toBe(0);
    const [ann] = await client.listUsers({ username: 'map.ann' });
    expect(ann?.groups).toHaveLength(2);

    const overridden = await runPorter(
      [...args, '--list-separator', '|', '--wait'],
      pipeline.childEnv(),
    );
    expect(overridden.code).toBe(2);
  }, 60_000);

  it('the HTTP API reads them from the mapping field the same way', () => {
    const mapping = JSON.stringify({ listSeparator: ',', delimiter: 'tab' });
    const fromMapping = parseImportFields({ resource: 'users', mode: 'upsert', mapping });
    expect(fromMapping.options).toMatchObject({ listSeparator: ',', delimiter: '\t' });
    const given = parseImportFields({
      resource: 'users',
      mode: 'upsert',
      mapping,
      listSeparator: ';',
      delimiter: ',',
    });
    expect(given.options).toMatchObject({ listSeparator: ';', delimiter: ',' });
    expect(parseImportFields({ resource: 'users', mode: 'upsert' }).options.listSeparator).toBe(
      '|',
    );
  });
});
