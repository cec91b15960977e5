/**
 * porter on a real 3-master Redis Cluster started from redis-server: an import, an export, a
 * sync and a migration run to the end, and the work spreads over the masters; API tokens are
 * created and revoked with their audit events in one MULTI.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startExport } from '../../src/app/exports.js';
import { securityOf } from '../../src/app/security.js';
import { loadEnv } from '../../src/config/env.js';
import { checkRedis } from '../../src/redis/check-redis.js';
import { requireMigration, startMigration } from '../../src/app/migrations.js';
import { FINAL_MIGRATION_STATES } from '../../src/migrate/migration-model.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startExportHarness, type ExportHarness } from '../export/export-fixture.js';
import { bundleText, seedSource } from '../migrate/migrate-fixture.js';
import { csv } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-topology.js';

let cluster: RedisCluster;
let harness: ExportHarness;

beforeAll(async () => {
  cluster = await startRedisCluster();
  harness = await startExportHarness({ env: { REDIS_CLUSTER_NODES: cluster.nodes } });
}, 60_000);
afterAll(async () => {
  await harness?.close();
  await cluster?.stop();
});

async function keysOn(port: number): Promise<number> {
  const redis = new Redis({ port, host: '127.0.0.1' });
  try {
    return await redis.dbsize();
  } finally {
    redis.disconnect();
  }
}

describe('porter on a Redis Cluster', () => {
  it('imports: every record once, and the keys spread over the masters', async () => {
    const { pipeline } = harness;
    const rows = Array.from({ length: 60 }, (_, index) => [`cluster.${index}`, `C ${index}`]);
    const runs = await Promise.all(
      [0, 1, 2].map((part) =>
        pipeline.run(csv(['username', 'lastName'], rows.slice(part * 20, part * 20 + 20)), {
          resource: 'users',
          mode: 'upsert',
          batchSize: 5,
        }),
      ),
    );
    for (const { info } of runs) {
      expect(info.state).toBe('completed');
      expect(info.counts.succeeded).toBe(20);
    }
    expect(pipeline.sandbox.store.counts().users).toBe(60);
    // a second run of the same rows finds them: nothing created twice
    const again = await pipeline.run(csv(['username', 'lastName'], rows.slice(0, 20)), {
      resource: 'users',
      mode: 'upsert',
      batchSize: 5,
    });
    expect(again.info.counts).toMatchObject({ failed: 0, unprocessed: 0 });
    expect(pipeline.sandbox.store.counts().users).toBe(60);
    const perNode = await Promise.all(cluster.ports.map((port) => keysOn(port)));
    expect(perNode.filter((count) => count > 0).length).toBeGreaterThan(1);
  }, 60_000);

  it('exports every user', async () => {
    const queued = await startExport(harness.pipeline.context, {
      resource: 'users',
      format: 'ndjson',
      outDir: harness.outDir,
    });
    const info = await harness.waitExport(queued.id);
    expect(info.state).toBe('completed');
    expect(info.counts?.users).toBe(harness.pipeline.sandbox.store.counts().users);
  }, 60_000);

  it('syncs: records the file leaves out are deleted, the rest kept', async () => {
    const { pipeline } = harness;
    const keep = Array.from({ length: 50 }, (_, index) => [`cluster.${index}`, `C ${index}`]);
    const { info } = await pipeline.run(csv(['username', 'lastName'], keep), {
      resource: 'users',
      mode: 'sync',
      batchSize: 10,
      sync: { missing: 'delete', maxDeletes: '50%' },
    });
    expect(info.state).toBe('completed');
    expect(pipeline.sandbox.store.counts().users).toBe(50);
  }, 60_000);

  it('migrates a bundle into the target, every stage done', async () => {
    let source: RunningSandbox | undefined;
    try {
      source = await startSandbox({ port: 0 });
      await seedSource(source.url, { groups: 3, usersPerGroup: 3, aclsPerGroup: 2, tag: 'cl' });
      const bundle = await bundleText(source.url);
      const { context } = harness.pipeline;
      const started = await startMigration(context, {
        source: Readable.from([Buffer.from(bundle)]),
        fileName: 'bundle.json',
        options: { mode: 'upsert', dryRun: false, allowAdmin: false, batchSize: 5 },
      });
      const info = await waitFor(
        async () => {
          const current = await requireMigration(context, started.id);
          return FINAL_MIGRATION_STATES.has(current.state) ? current : undefined;
        },
        { timeoutMs: 60_000, what: 'the migration' },
      );
      expect(info.state).toBe('completed');
      expect(info.stages.map((stage) => [stage.stage, stage.phase])).toEqual([
        ['groups', 'done'],
        ['acls', 'done'],
        ['users', 'done'],
        ['memberships', 'done'],
      ]);
    } finally {
      await source?.close();
    }
  }, 90_000);

  it('creates and revokes a token with its audit events (one MULTI, one slot)', async () => {
    const { tokens, audit } = securityOf(harness.pipeline.context);
    const by = { at: new Date().toISOString(), actionId: 'cluster', who: { name: 'test' } };
    const { token, info } = await tokens.create({ name: 'cluster-ops', role: 'operator' }, by);
    expect(await tokens.verify(token)).toMatchObject({ name: 'token:cluster-ops' });
    await tokens.revoke('cluster-ops', by);
    expect(await tokens.verify(token)).toBeUndefined();
    const events = await audit.read({ action: 'token.' });
    expect(events.map((event) => [event.action, event.what.tokenId])).toEqual([
      ['token.revoke', info.id],
      ['token.create', info.id],
    ]);
  });

  it('a CLI command writes its audit events to the Cluster, as every other command does', async () => {
    const { env } = harness.pipeline.context;
    const cli = await runPorter(['cancel', 'imp_01m8aaaaaaaaaaaaaaaaaaaaaa'], {
      REDIS_CLUSTER_NODES: cluster.nodes,
      PORTER_PREFIX: env.PORTER_PREFIX,
      ADMIN_BASE_URL: env.ADMIN_BASE_URL ?? '',
    });
    expect(cli.code, cli.stderr).not.toBe(0);
    const events = await securityOf(harness.pipeline.context).audit.read({
      action: 'import.cancel',
    });
    expect(events.map((event) => event.phase).sort()).toEqual(['intent', 'result']);
    expect(events.find((event) => event.phase === 'result')?.result?.ok).toBe(false);
  });

  it('a REDIS_URL naming a Cluster node stops start-up with one line naming REDIS_CLUSTER_NODES', async () => {
    const url = `redis://127.0.0.1:${cluster.ports[0]}`;
    await expect(checkRedis(loadEnv({ REDIS_URL: url }))).rejects.toMatchObject({
      code: 'PORTER_REDIS_UNSUITABLE',
      message: expect.stringMatching(
        /is a Cluster node, not a single Redis: set REDIS_CLUSTER_NODES/,
      ),
    });
  });
});
