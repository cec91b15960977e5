import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  requireMigration,
  startMigration,
  writeMigrationReport,
} from '../../src/app/migrations.js';
import {
  FINAL_MIGRATION_STATES,
  type MigrationInfo,
  type MigrationOptions,
} from '../../src/migrate/migration-model.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { bundleText, seedSource } from './migrate-fixture.js';
import { AdminClient } from '../../src/admin/client.js';
import { diffDirectories, bundleDiffSource } from '../../src/app/diff.js';
import { runPorter } from '../helpers/porter-cli.js';

let source: RunningSandbox;
let pipeline: Pipeline;
let dir: string;

beforeEach(async () => {
  source = await startSandbox({ port: 0 });
  pipeline = await startPipeline();
  dir = await mkdtemp(join(tmpdir(), 'porter-migrate-'));
});
afterEach(async () => {
  await pipeline?.close();
  await source?.close();
  await rm(dir, { recursive: true, force: true });
});

const UPSERT: MigrationOptions = {
  mode: 'upsert',
  dryRun: false,
  allowAdmin: false,
  batchSize: 50,
};

async function migrate(
  bundle: string,
  options: Partial<MigrationOptions> = {},
): Promise<MigrationInfo> {
  const info = await startMigration(pipeline.context, {
    source: Readable.from([Buffer.from(bundle)]),
    fileName: 'bundle.json',
    options: { ...UPSERT, ...options },
  });
  return waitFor(
    async () => {
      const current = await requireMigration(pipeline.context, info.id);
      return FINAL_MIGRATION_STATES.has(current.state) ? current : undefined;
    },
    { timeoutMs: 120_000, what: `migration ${info.id}` },
  );
}

describe('porter migrate', () => {
  it('loads groups, ACLs, users and memberships into an empty target, ids remapped', async () => {
    await seedSource(source.url, { groups: 4, usersPerGroup: 5, aclsPerGroup: 2 });
    const target = pipeline.sandbox.store;
    const bundle = await bundleText(source.url);
    const info = await migrate(bundle);
    expect(info.state).toBe('completed');
    expect(info.stages.map((stage) => [stage.stage, stage.phase, stage.counts?.succeeded])).toEqual(
      [
        ['groups', 'done', 4],
        ['acls', 'done', 8],
        ['users', 'done', 20],
        ['memberships', 'done', 4],
      ],
    );
    expect(target.counts()).toEqual({ users: 20, groups: 4, acls: 8 });
    const member = target.userByName('src.user-1-0')!;
    const groupNames = member.groups!.map((id) => target.group(id)!.name).sort();
    expect(groupNames).toEqual(['src group 1', 'src group 2']);
    const status = await runPorter(['status', info.id], pipeline.childEnv());
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`migration ${info.id} completed`);
    expect(status.stdout).toMatch(/users\s+done\s+20\/20 users: 20 succeeded \(20 create\)/);
    await writeMigrationReport(pipeline.context, info.id, dir);
    const idMap = await readFile(join(dir, 'id-map.csv'), 'utf8');
    expect(idMap.split('\n')[0]).toBe('resource,sourceId,targetId,key');
    expect(idMap.trim().split('\n')).toHaveLength(1 + 4 + 8 + 20);
  }, 180_000);

  it('a migrated target diffs equal to its source, and a second run writes nothing', async () => {
    await seedSource(source.url, { groups: 3, usersPerGroup: 4, aclsPerGroup: 2 });
    // the target already holds one group and one user of the source, under other ids, with
    // other values, and records of its own
    const client = new AdminClient({ baseUrl: pipeline.sandbox.url, requestTimeoutMs: 10_000 });
    try {
      await client.postGroups([{ name: 'target only' }, { name: 'another' }]);
      await client.postGroups([{ name: 'src group 1', description: 'stale' }]);
      await client.postUsers([{ username: 'src.user-2-1', firstName: 'Old' }]);
    } finally {
      await client.close();
    }
    const bundle = await bundleText(source.url);
    const first = await migrate(bundle);
    expect(first.state).toBe('completed');
    const stats = pipeline.sandbox.store.stats;
    expect(stats.applied.groups.updated).toBeGreaterThan(0);
    // ids differ: the id map says so
    await writeMigrationReport(pipeline.context, first.id, dir);
    const idMap = await readFile(join(dir, 'id-map.csv'), 'utf8');
    const groupRow = idMap.split('\n').find((line) => line.endsWith(',src group 1'))!;
    const [, sourceId, targetId] = groupRow.split(',');
    expect(sourceId).not.toBe(targetId);
    for (const stage of ['groups', 'acls', 'users', 'memberships']) {
      const report = await readFile(join(dir, `${stage}.csv`), 'utf8');
      expect(report.trim().split('\n').length).toBeGreaterThan(1);
    }

    const sourceFile = join(dir, 'source.json');
    const targetFile = join(dir, 'target.json');
    await writeFile(sourceFile, bundle);
    await writeFile(targetFile, await bundleText(pipeline.sandbox.url));
    const diff = await diffDirectories(
      pipeline.context,
      bundleDiffSource(sourceFile),
      bundleDiffSource(targetFile),
      join(dir, 'diff'),
    );
    // the target's own groups are only in B; everything of the source is equal
    expect(diff.counts.groups).toEqual({ onlyA: 0, onlyB: 2, different: 0, equal: 3 });
    expect(diff.counts.users).toEqual({ onlyA: 0, onlyB: 0, different: 0, equal: 12 });
    expect(diff.counts.acls).toEqual({ onlyA: 0, onlyB: 0, different: 0, equal: 6 });

    // the CLI, on the target with the target's own groups gone: exit 0
    const remover = new AdminClient({ baseUrl: pipeline.sandbox.url, requestTimeoutMs: 10_000 });
    try {
      await remover.deleteGroups([{ name: 'target only' }, { name: 'another' }]);
    } finally {
      await remover.close();
    }
    const cli = await runPorter(
      ['diff', sourceFile, '--live', '--out', join(dir, 'cli-diff')],
      pipeline.childEnv(),
    );
    expect(cli.stderr).toContain('equal');
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/users\s+0\s+0\s+0\s+12/);

    const writesBefore = JSON.stringify(stats.writes);
    const second = await migrate(bundle);
    expect(second.state).toBe('completed');
    expect(JSON.stringify(stats.writes)).toBe(writesBefore);
    for (const stage of second.stages) {
      expect(stage.actions).toEqual({ unchanged: stage.total });
    }
  }, 240_000);

  it('a changed record makes the diff say where, with exit 2 and spreadsheet-safe cells', async () => {
    await seedSource(source.url, { groups: 2, usersPerGroup: 2, aclsPerGroup: 1 });
    const before = join(dir, 'before.json');
    await writeFile(before, await bundleText(source.url));
    const client = new AdminClient({ baseUrl: source.url, requestTimeoutMs: 10_000 });
    try {
      const [user] = await client.listUsers({ username: 'src.user-0-1' });
      await client.putUsers([{ ...user, phone: '=1+2' }]);
      await client.postUsers([{ username: 'newcomer' }]);
    } finally {
      await client.close();
    }
    const after = join(dir, 'after.json');
    await writeFile(after, await bundleText(source.url));
    const cli = await runPorter(
      ['diff', before, after, '--out', join(dir, 'changes')],
      pipeline.childEnv(),
    );
    expect(cli.code).toBe(2);
    const csv = await readFile(join(dir, 'changes', 'diff.csv'), 'utf8');
    expect(csv).toContain("src.user-0-1,users,phone,'+49 30 1234,'=1+2");
    expect(csv).toContain('newcomer,users,(record),,present');
    const rows = JSON.parse(await readFile(join(dir, 'changes', 'diff.json'), 'utf8')) as unknown[];
    expect(rows).toHaveLength(2);
  }, 120_000);

  it('under --mode create, a group whose name is taken fails, and so do its ACLs and memberships; the rest migrate', async () => {
    await seedSource(source.url, { groups: 3, usersPerGroup: 2, aclsPerGroup: 2 });
    const client = new AdminClient({ baseUrl: pipeline.sandbox.url, requestTimeoutMs: 10_000 });
    try {
      await client.postGroups([{ name: 'filler' }, { name: 'src group 1', description: 'theirs' }]);
    } finally {
      await client.close();
    }
    const info = await migrate(await bundleText(source.url), { mode: 'create' });
    expect(info.state).toBe('completed_with_errors');
    const counts = Object.fromEntries(
      info.stages.map((stage) => [stage.stage, [stage.counts?.succeeded, stage.counts?.failed]]),
    );
    expect(counts).toEqual({
      groups: [2, 1],
      acls: [4, 2],
      users: [6, 0],
      memberships: [2, 1],
    });
    const target = pipeline.sandbox.store;
    expect(target.groupByName('src group 1')!.description).toBe('theirs');
    expect(target.groupByName('src group 1')!.users).toEqual([]);
    expect(target.acls().filter((acl) => acl.name?.startsWith('acl 1-'))).toHaveLength(0);
    await writeMigrationReport(pipeline.context, info.id, dir);
    const acls = await readFile(join(dir, 'acls.csv'), 'utf8');
    const failedAcls = acls.split('\n').filter((line) => line.includes('PORTER_REFERENCE_FAILED'));
    expect(failedAcls).toHaveLength(2);
    expect(failedAcls[0]).toContain('group ""src group 1""');
    expect(failedAcls[0]).toContain('ALREADY_EXISTS');
    const memberships = await readFile(join(dir, 'memberships.csv'), 'utf8');
    expect(memberships).toMatch(/PORTER_REFERENCE_FAILED.*src group 1/);
    const idMap = await readFile(join(dir, 'id-map.csv'), 'utf8');
    expect(idMap).not.toContain(',src group 1\n');
    expect(idMap).toContain(',src group 2\n');
  }, 180_000);

  it('a dry run writes nothing and shows the plan of every stage', async () => {
    await seedSource(source.url, { groups: 3, usersPerGroup: 2, aclsPerGroup: 2 });
    const client = new AdminClient({ baseUrl: pipeline.sandbox.url, requestTimeoutMs: 10_000 });
    try {
      await client.postGroups([{ name: 'src group 0', description: 'old' }]);
    } finally {
      await client.close();
    }
    const stats = pipeline.sandbox.store.stats;
    const writesBefore = JSON.stringify(stats.writes);
    const info = await migrate(await bundleText(source.url), { dryRun: true });
    expect(info.state).toBe('completed');
    expect(JSON.stringify(stats.writes)).toBe(writesBefore);
    expect(pipeline.sandbox.store.counts()).toEqual({ users: 0, groups: 1, acls: 0 });
    const actions = Object.fromEntries(info.stages.map((stage) => [stage.stage, stage.actions]));
    expect(actions).toEqual({
      groups: { create: 2, update: 1 },
      acls: { create: 6 },
      users: { create: 6 },
      memberships: { update: 3 },
    });
    await writeMigrationReport(pipeline.context, info.id, dir);
    const groups = await readFile(join(dir, 'groups.csv'), 'utf8');
    expect(groups).toContain('description: old → group number 0');
    const idMap = await readFile(join(dir, 'id-map.csv'), 'utf8');
    expect(idMap).toMatch(/groups,\d+,\(new\),src group 1/);
  }, 180_000);

  it('porter migrate: a dry run shows the plan, then the migration writes its report directory', async () => {
    await seedSource(source.url, { groups: 2, usersPerGroup: 2, aclsPerGroup: 1 });
    const bundleFile = join(dir, 'bundle.json');
    await writeFile(bundleFile, await bundleText(source.url));
    const plan = await runPorter(
      ['migrate', bundleFile, '--dry-run', '--wait', '--report', join(dir, 'plan')],
      pipeline.childEnv(),
    );
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^mig_/);
    expect(plan.stderr).toContain('[dry run]');
    expect(plan.stderr).toMatch(/users\s+done\s+4\/4 users: 4 planned \(4 create\)/);
    expect(pipeline.sandbox.store.counts()).toEqual({ users: 0, groups: 0, acls: 0 });
    const run = await runPorter(
      ['migrate', bundleFile, '--wait', '--report', join(dir, 'report')],
      pipeline.childEnv(),
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/memberships\s+done\s+2\/2 group member lists: 2 succeeded/);
    // the last state is said once, then the stages
    const finalLines = run.stderr
      .split('\n')
      .filter((line) => /^migration mig_\S+ completed/.test(line));
    expect(finalLines).toHaveLength(1);
    for (const file of ['groups', 'acls', 'users', 'memberships', 'id-map']) {
      const text = await readFile(join(dir, 'report', `${file}.csv`), 'utf8');
      expect(text.length).toBeGreaterThan(0);
    }
    expect(pipeline.sandbox.store.counts()).toEqual({ users: 4, groups: 2, acls: 2 });
    // porter report of a migration writes its report directory, or says how
    const migrationId = run.stdout.trim();
    const pointed = await runPorter(['report', migrationId], pipeline.childEnv());
    expect(pointed.code).toBe(64);
    expect(pointed.stderr).toContain(`porter report ${migrationId} --out DIR`);
    const again = await runPorter(
      ['report', migrationId, '--out', join(dir, 'again')],
      pipeline.childEnv(),
    );
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(join(dir, 'again', 'id-map.csv'), 'utf8')).toContain(',');
    const refused = await runPorter(
      ['migrate', bundleFile, '--no-wait', '--report', join(dir, 'later')],
      pipeline.childEnv(),
    );
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain('--report needs the end of the work: drop --no-wait');
    // a report directory that holds a report already is not written over unasked
    const kept = await runPorter(
      ['migrate', bundleFile, '--wait', '--report', join(dir, 'report')],
      pipeline.childEnv(),
    );
    expect(kept.code).toBe(64);
    expect(kept.stderr).toContain('holds groups.csv already; pass --force');
  }, 180_000);
});
