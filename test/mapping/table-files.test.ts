/**
 * A mapping's table files lie beside it: a relative path inside the mapping's folder, a regular
 * file of bounded size, and its keys read as data whatever they are.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PorterError } from '../../src/errors/porter-error.js';
import { ingest, type IngestItem } from '../../src/ingest/index.js';
import { MAX_TABLE_FILE_BYTES, readMappingFile } from '../../src/mapping/read-mapping-file.js';

let root: string;
let folder: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'porter-tables-'));
  folder = join(root, 'mappings');
  await mkdir(join(folder, 'tables'), { recursive: true });
  await mkdir(join(root, 'secret'));
  await writeFile(join(root, 'secret', 'creds.json'), '{"password":"hunter2"}');
  await writeFile(join(folder, 'tables', 'sites.json'), '{"LYO":"Lyon"}');
  await writeFile(
    join(folder, 'codes.csv'),
    'code,group\n__proto__,Polluters\nconstructor,Builders\ntoString,Strings\nMKT,Marketing\nMKT,Staff\n',
  );
  await symlink(join(root, 'secret', 'creds.json'), join(folder, 'creds.json'));
  await symlink(join(root, 'secret'), join(folder, 'secret-folder'));
  await symlink(join(folder, 'codes.csv'), join(folder, 'codes-link.csv'));
  await writeFile(join(folder, 'big.json'), `{"a":"${'x'.repeat(MAX_TABLE_FILE_BYTES)}"}`);
  execFileSync('mkfifo', [join(folder, 'pipe.csv')]);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function read(tables: Record<string, unknown>): Promise<unknown> {
  return readMappingFile(join(folder, 'mapping.json'), { fields: {}, tables }, 'users');
}

async function refusal(file: string): Promise<string> {
  try {
    await read({ t: { file } });
  } catch (error) {
    expect(error).toBeInstanceOf(PorterError);
    expect((error as PorterError).code).toBe('PORTER_MAPPING_INVALID');
    return (error as Error).message;
  }
  throw new Error(`expected ${file} to be refused`);
}

describe('table files', () => {
  it('are read beside the mapping, in its folder or below it', async () => {
    const mapping = (await read({ sites: { file: 'tables/sites.json' } })) as {
      tables: Record<string, { values: Record<string, unknown> }>;
    };
    expect(mapping.tables.sites!.values).toEqual({ LYO: 'Lyon' });
    const linked = (await read({ codes: { file: 'codes-link.csv' } })) as {
      tables: Record<string, { values: Record<string, unknown> }>;
    };
    expect(linked.tables.codes!.values.MKT).toEqual(['Marketing', 'Staff']);
  });

  it.each([
    ['../secret/creds.json', /leaves the mapping's folder/],
    ['tables/../../secret/creds.json', /leaves the mapping's folder/],
    ['/dev/zero', /must be a path relative to the mapping file/],
    ['/etc/hostname', /must be a path relative to the mapping file/],
    ['creds.json', /is a link to a file outside the mapping's folder/],
    ['secret-folder/creds.json', /is a link to a file outside the mapping's folder/],
    ['tables', /is not a regular file/],
    ['pipe.csv', /is not a regular file/],
    ['big.json', /is larger than 1 MiB, the limit of a table file/],
    ['missing.csv', /cannot read missing\.csv \(ENOENT\)/],
  ])('refuses %s', async (file, reason) => {
    const message = await refusal(file);
    expect(message).toMatch(reason);
    expect(message).not.toContain('hunter2');
  });

  it('reads __proto__, constructor and toString as keys and table names like any other', async () => {
    const mapping = await readMappingFile(
      join(folder, 'mapping.json'),
      // as a mapping file reads: JSON gives "__proto__" as an own key
      JSON.parse(`{
        "fields": {
          "groups": "$table('__proto__', Code)",
          "position": "$table('constructor', Code, 'none')"
        },
        "tables": {
          "__proto__": { "file": "codes.csv" },
          "constructor": { "values": { "__proto__": "Inline proto", "MKT": "Inline" } }
        }
      }`),
      'users',
    );
    const run = ingest(
      Buffer.from('username,Code\na,__proto__\nb,constructor\nc,toString\nd,MKT\n'),
      {
        resource: 'users',
        mode: 'upsert',
        mapping,
      },
    );
    const items: IngestItem[] = [];
    for await (const item of run.items) items.push(item);
    const records = items.map((item) => (item.kind === 'record' ? item.record : item));
    expect(records).toEqual([
      { username: 'a', groups: ['Polluters'], position: 'Inline proto' },
      { username: 'b', groups: ['Builders'], position: 'none' },
      { username: 'c', groups: ['Strings'], position: 'none' },
      { username: 'd', groups: ['Marketing', 'Staff'], position: 'Inline' },
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
