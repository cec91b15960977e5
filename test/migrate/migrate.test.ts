import { readFile, mkdtemp, rm } from 'node:fs/promises';
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
    await writeMigrationReport(pipeline.context, info.id, dir);
    const idMap = await readFile(join(dir, 'id-map.csv'), 'utf8');
    expect(idMap.split('\n')[0]).toBe('resource,sourceId,targetId,key');
    expect(idMap.trim().split('\n')).toHaveLength(1 + 4 + 8 + 20);
  }, 180_000);
});
