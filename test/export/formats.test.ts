/**
 * The export core against a real sandbox over HTTP: each resource in each format, the bundle,
 * the manifest (counts, sha256, times, source, version) and the portable form of the records.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GroupRecord, UserRecord } from '../../src/admin/schemas.js';
import { csvColumns, EXPORT_MARKER_COLUMN } from '../../src/export/csv-writer.js';
import { newExportId } from '../../src/export/export-id.js';
import { checkExportRequest } from '../../src/export/export-plan.js';
import { runExport } from '../../src/export/export-run.js';
import type { ExportFormat, ExportResource } from '../../src/export/export-types.js';
import type { ExportManifest } from '../../src/export/manifest.js';
import { PORTER_VERSION } from '../../src/version.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { listTree, readCsv } from './export-fixture.js';

const RETRY = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50 };
let sandbox: TestSandbox;
let outDir: string;
let digitsGroup: GroupRecord;
let pipeGroup: GroupRecord;

beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: { users: 150, groups: 6, acls: 9 } });
  outDir = await mkdtemp(join(tmpdir(), 'porter-formats-'));
  [digitsGroup, pipeGroup] = await sandbox.client.putGroups([
    { name: '2024', description: '=SUM(A1:A2)', priority: -3 },
    { name: 'Ops|Infra', description: 'has the separator' },
  ]);
  await sandbox.client.putUsers([
    {
      username: 'special.user',
      firstName: '=HYPERLINK("http://evil.example","x")',
      phone: '+49 30 1234',
      groups: [1, digitsGroup.id!, pipeGroup.id!],
      substitutionMap: { a: 1, b: 'two' },
    },
  ]);
});
afterAll(async () => {
  await sandbox?.close();
  await rm(outDir, { recursive: true, force: true });
});

async function exportTo(
  resource: ExportResource,
  format: ExportFormat,
): Promise<{ manifest: ExportManifest; dir: string }> {
  const id = newExportId();
  const dir = join(outDir, id);
  const request = checkExportRequest({ resource, format, outDir });
  const manifest = await runExport({ id, request, dir }, { client: sandbox.client, retry: RETRY });
  return { manifest, dir };
}

function groupName(id: number): string {
  return sandbox.store.group(id)!.name!;
}

/** A user as the JSON files carry it: groups by name, `name:` before a name of digits. */
function portableUser(user: UserRecord): Record<string, unknown> {
  const groups = (user.groups ?? []).map((id) =>
    id === digitsGroup.id ? `name:${groupName(id)}` : groupName(id),
  );
  return { ...user, groups };
}

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

describe('per-resource files', () => {
  it('users as CSV: spec columns, lists joined by "|", groups by name, formula-safe cells', async () => {
    const { manifest, dir } = await exportTo('users', 'csv');
    const users = sandbox.store.users();
    expect(manifest.counts).toEqual({ users: users.length });
    const text = await readFile(join(dir, 'users.csv'), 'utf8');
    expect(text.split('\n')[0]).toBe(csvColumns('users').join(','));
    const rows = await readCsv(join(dir, 'users.csv'));
    expect(rows).toHaveLength(users.length);
    expect(rows.map((row) => row.username)).toEqual(users.map((user) => user.username));
    const special = rows.find((row) => row.username === 'special.user')!;
    expect(special.firstName).toBe(`'=HYPERLINK("http://evil.example","x")`);
    expect(special.phone).toBe("'+49 30 1234");
    expect(special.groups).toBe(`${groupName(1)}|name:2024|${pipeGroup.id}`);
    expect(JSON.parse(special.substitutionMap!)).toEqual({ a: 1, b: 'two' });
    expect(special[EXPORT_MARKER_COLUMN]).toBe('');
    const first = users[0]!;
    expect(rows[0]!.groups).toBe((first.groups ?? []).map(groupName).join('|'));
    expect(manifest.warnings).toEqual(
      expect.arrayContaining([expect.stringContaining('group "Ops|Infra"')]),
    );
    expect(manifest.warnings.join('\n')).not.toContain('group "2024"');
  });

  it('groups as CSV leave out the members (they travel with the users) and keep the rest', async () => {
    const { manifest, dir } = await exportTo('groups', 'csv');
    const rows = await readCsv(join(dir, 'groups.csv'));
    const groups = sandbox.store.groups();
    expect(manifest.counts).toEqual({ groups: groups.length });
    expect(Object.keys(rows[0]!)).not.toContain('users');
    const digits = rows.find((row) => row.name === '2024')!;
    expect(digits).toMatchObject({ description: "'=SUM(A1:A2)", priority: "'-3" });
    const withAcls = groups.find((group) => (group.acls ?? []).length > 1)!;
    expect(rows.find((row) => row.name === withAcls.name)!.acls).toBe(withAcls.acls!.join('|'));
  });

  it('ACLs as CSV name their group', async () => {
    const { dir } = await exportTo('acls', 'csv');
    const rows = await readCsv(join(dir, 'acls.csv'));
    const acls = sandbox.store.acls();
    expect(rows).toHaveLength(acls.length);
    for (const [index, acl] of acls.entries()) {
      expect(rows[index]).toMatchObject({
        id: acl.id,
        groupId: groupName(acl.groupId!),
        revokedPermissions: acl.revokedPermissions!.join('|'),
        searchFilter: acl.searchFilter ?? '',
      });
    }
  });

  it('users as JSON: one array, records in the portable form', async () => {
    const { manifest, dir } = await exportTo('users', 'json');
    const parsed = JSON.parse(await readFile(join(dir, 'users.json'), 'utf8')) as unknown[];
    expect(parsed).toEqual(sandbox.store.users().map(portableUser));
    expect(manifest.files).toEqual([
      expect.objectContaining({ name: 'users.json', content: 'users', records: parsed.length }),
    ]);
  });

  it('groups as NDJSON: one record per line, without members', async () => {
    const { dir } = await exportTo('groups', 'ndjson');
    const lines = (await readFile(join(dir, 'groups.ndjson'), 'utf8')).trimEnd().split('\n');
    const expected = sandbox.store.groups().map(({ users: _users, ...group }) => group);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(expected);
  });

  it('an empty resource gives a valid empty file', async () => {
    const empty = await startTestSandbox();
    try {
      const id = newExportId();
      const dir = join(outDir, id);
      const request = checkExportRequest({ resource: 'acls', format: 'json', outDir });
      const manifest = await runExport(
        { id, request, dir },
        { client: empty.client, retry: RETRY },
      );
      expect(manifest.counts).toEqual({ acls: 0 });
      expect(JSON.parse(await readFile(join(dir, 'acls.json'), 'utf8'))).toEqual([]);
    } finally {
      await empty.close();
    }
  });
});

describe('all resources', () => {
  it('as CSV: three files read groups, users, ACLs, and a manifest that describes them', async () => {
    const before = Date.now();
    const { manifest, dir } = await exportTo('all', 'csv');
    expect(await listTree(dir)).toEqual(['acls.csv', 'groups.csv', 'manifest.json', 'users.csv']);
    const onDisk = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as ExportManifest;
    expect(onDisk).toEqual(manifest);
    const counts = sandbox.store.counts();
    expect(manifest).toMatchObject({
      porter: 'porter-export',
      manifestVersion: 1,
      porterVersion: PORTER_VERSION,
      source: sandbox.url,
      resource: 'all',
      format: 'csv',
      counts,
      consistency: { readOrder: ['groups', 'users', 'acls'], groupsChanged: false },
    });
    expect(manifest.files.map((file) => file.name)).toEqual([
      'groups.csv',
      'users.csv',
      'acls.csv',
    ]);
    for (const file of manifest.files) {
      expect(file.sha256).toBe(await sha256(join(dir, file.name)));
      expect(file.bytes).toBe((await readFile(join(dir, file.name))).length);
      expect(file.records).toBe(counts[file.content as keyof typeof counts]);
    }
    expect(Date.parse(manifest.startedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(manifest.finishedAt)).toBeGreaterThanOrEqual(Date.parse(manifest.startedAt));
  });

  it.each([['bundle'], ['json']] as const)(
    'with %s: one bundle document, records as the server answered them',
    async (format) => {
      const { manifest, dir } = await exportTo('all', format);
      expect(await listTree(dir)).toEqual(['bundle.json', 'manifest.json']);
      const bundle = JSON.parse(await readFile(join(dir, 'bundle.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(Object.keys(bundle)).toEqual([
        'porter',
        'version',
        'exportedAt',
        'source',
        'porterVersion',
        'groups',
        'users',
        'acls',
      ]);
      expect(bundle).toMatchObject({
        porter: 'bundle',
        version: 1,
        exportedAt: manifest.startedAt,
        source: sandbox.url,
        porterVersion: PORTER_VERSION,
      });
      expect(bundle.groups).toEqual(sandbox.store.groups());
      expect(bundle.users).toEqual(sandbox.store.users());
      expect(bundle.acls).toEqual(sandbox.store.acls());
      expect(manifest.files).toEqual([
        expect.objectContaining({ name: 'bundle.json', content: 'bundle', format: 'json' }),
      ]);
      expect(manifest.counts).toEqual(sandbox.store.counts());
    },
  );

  it('as NDJSON: one file per resource', async () => {
    const { dir } = await exportTo('all', 'ndjson');
    expect(await listTree(dir)).toEqual([
      'acls.ndjson',
      'groups.ndjson',
      'manifest.json',
      'users.ndjson',
    ]);
  });
});

describe('requests', () => {
  it.each([
    [{ resource: 'users', format: 'bundle', outDir: '/x' }, /use --resource all/],
    [{ resource: 'people', format: 'csv', outDir: '/x' }, /Unknown resource "people"/],
    [{ resource: 'users', format: 'xml', outDir: '/x' }, /Unknown format "xml"/],
    [{ resource: 'users', format: 'csv', outDir: 'relative' }, /absolute path/],
  ])('%j is refused with PORTER_USAGE', (request, message) => {
    expect(() => checkExportRequest(request)).toThrow(message);
  });
});
