/**
 * Exported files import again: users and groups exported from one sandbox and imported with
 * mode upsert into an empty one reproduce the same records (ids aside); imported into the same
 * sandbox they change nothing. For each per-resource format, through the real pipeline.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AclRecord, GroupRecord, UserRecord } from '../../src/admin/schemas.js';
import { startExport } from '../../src/app/exports.js';
import type { ExportFormat } from '../../src/export/export-types.js';
import type { ImportOptions } from '../../src/model/import.js';
import type { RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { startExportHarness, type ExportHarness } from './export-fixture.js';

let source: ExportHarness;

beforeAll(async () => {
  source = await startExportHarness({ sandbox: { seed: { users: 600, groups: 12, acls: 20 } } });
  const client = source.pipeline.context.createAdminClient();
  try {
    const [formula, negative] = await client.putGroups([
      { name: '=Admins', description: 'line one\nline two, with "quotes"', priority: 2 },
      { name: 'Negative', description: "'=already quoted", priority: -3, loginText: '@hello' },
    ]);
    await client.putUsers([
      {
        username: 'formula person',
        firstName: '=1+1',
        middleName: '@home',
        lastName: "'=quoted",
        company: '-dash',
        phone: '+49 30 1234',
        type: 'Global Administrator',
        status: 'Locked',
        groups: [formula!.id!, negative!.id!, 1],
        substitutionMap: { deputy: 'someone', level: 2 },
      },
    ]);
  } finally {
    await client.close();
  }
});
afterAll(async () => source?.close());

const IMPORT: Pick<ImportOptions, 'mode' | 'allowAdmin'> = { mode: 'upsert', allowAdmin: true };

/** Users keyed by username, without their id and with group names instead of ids. */
function usersPicture(sandbox: RunningSandbox): Map<string, Record<string, unknown>> {
  const names = new Map(sandbox.store.groups().map((group) => [group.id, group.name]));
  return new Map(
    sandbox.store
      .users()
      .map(({ userId: _id, ...user }: UserRecord) => [
        user.username!,
        { ...user, groups: (user.groups ?? []).map((id) => names.get(id)).sort() },
      ]),
  );
}

/** Groups keyed by name, without id and ACLs, with usernames instead of member ids. */
function groupsPicture(sandbox: RunningSandbox): Map<string, Record<string, unknown>> {
  const usernames = new Map(sandbox.store.users().map((user) => [user.userId, user.username]));
  return new Map(
    sandbox.store
      .groups()
      .map(({ id: _id, acls: _acls, ...group }: GroupRecord) => [
        group.name!,
        { ...group, users: (group.users ?? []).map((id) => usernames.get(id)).sort() },
      ]),
  );
}

/** ACLs keyed by group name and ACL name, without their id. */
function aclsPicture(sandbox: RunningSandbox): Map<string, Record<string, unknown>> {
  const names = new Map(sandbox.store.groups().map((group) => [group.id, group.name]));
  return new Map(
    sandbox.store.acls().map(({ id: _id, ...acl }: AclRecord) => {
      const group = names.get(acl.groupId!);
      return [`${group}/${acl.name}`, { ...acl, groupId: group }];
    }),
  );
}

/** The per-resource files of one export of all three (JSON: `all` gives the bundle, so three). */
async function exportFiles(format: ExportFormat): Promise<Record<string, string>> {
  const resources = format === 'json' ? (['groups', 'users', 'acls'] as const) : (['all'] as const);
  const files: Record<string, string> = {};
  for (const resource of resources) {
    const info = await startExport(source.pipeline.context, {
      resource,
      format,
      outDir: source.outDir,
    });
    const done = await source.waitExport(info.id);
    expect(done.state).toBe('completed');
    for (const file of done.files) {
      files[file.content] = await readFile(join(done.dir, file.name), 'utf8');
    }
  }
  return files;
}

async function importAll(
  pipeline: Pipeline,
  files: Record<string, string>,
  format: ExportFormat,
  withAcls: boolean,
) {
  const extra = { format: format === 'csv' ? undefined : (format as 'json' | 'ndjson') };
  // groups first: users name their groups, ACLs name theirs
  const groups = await pipeline.run(files.groups!, { ...IMPORT, resource: 'groups' }, extra);
  const users = await pipeline.run(files.users!, { ...IMPORT, resource: 'users' }, extra);
  // an ACL id belongs to one server: matched by group and name elsewhere
  const acls = withAcls
    ? await pipeline.run(
        files.acls!,
        { ...IMPORT, resource: 'acls' },
        { ...extra, mapping: { columns: {}, ignore: ['id'], defaults: {} } },
      )
    : await pipeline.run(files.acls!, { ...IMPORT, resource: 'acls' }, extra);
  return { groups, users, acls };
}

describe.each([['csv'], ['json'], ['ndjson']] as const)('round trip as %s', (format) => {
  let files: Record<string, string>;
  let target: Pipeline;
  beforeAll(async () => {
    files = await exportFiles(format);
    target = await startPipeline();
  });
  afterAll(async () => target?.close());

  it('into an empty server reproduces every user, group and ACL (ids aside)', async () => {
    const { groups, users, acls } = await importAll(target, files, format, true);
    for (const outcome of [groups, users, acls]) {
      expect(outcome.info.counts).toMatchObject({
        failed: 0,
        skipped: 0,
        unprocessed: 0,
        planned: 0,
      });
    }
    expect(usersPicture(target.sandbox)).toEqual(usersPicture(source.pipeline.sandbox));
    expect(groupsPicture(target.sandbox)).toEqual(groupsPicture(source.pipeline.sandbox));
    expect(aclsPicture(target.sandbox)).toEqual(aclsPicture(source.pipeline.sandbox));
  });

  it('into the same server changes nothing: every record succeeds with changed: []', async () => {
    const before = {
      users: source.pipeline.sandbox.store.users(),
      groups: source.pipeline.sandbox.store.groups(),
      acls: source.pipeline.sandbox.store.acls(),
    };
    const outcomes = await importAll(source.pipeline, files, format, false);
    for (const outcome of Object.values(outcomes)) {
      expect(outcome.results.length).toBeGreaterThan(0);
      for (const result of outcome.results) {
        expect(result).toMatchObject({ status: 'succeeded', action: 'unchanged', changed: [] });
      }
    }
    expect(source.pipeline.sandbox.store.users()).toEqual(before.users);
    expect(source.pipeline.sandbox.store.groups()).toEqual(before.groups);
    expect(source.pipeline.sandbox.store.acls()).toEqual(before.acls);
  });
});
