/**
 * porter on a real Sentinel set started from redis-server (a master, a replica, three
 * Sentinels): a failover in the middle of an import loses nothing and creates nothing twice.
 * Also: a Redis that is not what the configuration says stops start-up with one line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { checkRedis } from '../../src/redis/check-redis.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { testRedisUrl, waitFor } from '../helpers/redis.js';
import { startSentinelSet, type SentinelSet } from '../helpers/redis-topology.js';

let sentinels: SentinelSet;
let pipeline: Pipeline;

beforeAll(async () => {
  sentinels = await startSentinelSet();
  pipeline = await startPipeline({
    env: { REDIS_SENTINELS: sentinels.sentinels, REDIS_SENTINEL_NAME: sentinels.name },
    sandbox: { faults: { latencyMs: 30 } },
  });
}, 90_000);
afterAll(async () => {
  await pipeline?.close();
  await sentinels?.stop();
});

describe('porter on a Sentinel set', () => {
  it('a failover in the middle of an import: every record created once, the import ends by itself', async () => {
    const rows = Array.from({ length: 200 }, (_, index) => [`sentinel.${index}`, `S ${index}`]);
    const submitted = await pipeline.submit(csv(['username', 'lastName'], rows), {
      resource: 'users',
      mode: 'upsert',
      batchSize: 10,
    });
    await waitFor(
      async () => {
        const info = await pipeline.context.store.get(submitted.id);
        return (info?.counts.succeeded ?? 0) >= 30 ? true : undefined;
      },
      { what: 'the import under way' },
    );
    // slow answers hold the import open while the Sentinels switch masters
    pipeline.sandbox.setFaults({ latencyMs: 2_000 });
    const before = await sentinels.masterPort();
    const after = await sentinels.failover();
    expect(after).not.toBe(before);
    expect((await pipeline.context.store.get(submitted.id))?.settled).toBe(false);
    pipeline.sandbox.setFaults({ latencyMs: 0 });
    const info = await pipeline.waitFinal(submitted.id, 120_000);
    expect(info.state).toBe('completed');
    expect(info.counts).toMatchObject({ succeeded: 200, failed: 0, unprocessed: 0 });
    const store = pipeline.sandbox.store;
    expect(store.counts().users).toBe(200);
    expect(store.stats.applied.users.created).toBe(200);
    expect(rows.every(([username]) => store.userByName(username!) !== undefined)).toBe(true);
  }, 180_000);
});

describe('a Redis that is not what the configuration says', () => {
  it('REDIS_URL naming a Sentinel: one line naming REDIS_SENTINELS, exit 78', async () => {
    const url = `redis://${sentinels.sentinels.split(',')[0]}`;
    await expect(checkRedis(loadEnv({ REDIS_URL: url }))).rejects.toMatchObject({
      code: 'PORTER_REDIS_UNSUITABLE',
      message: expect.stringMatching(/is a Sentinel, not a single Redis: set REDIS_SENTINELS/),
    });
    const cli = await runPorter(['list'], { REDIS_URL: url, PORTER_PREFIX: 'porter-test:check' });
    expect(cli.code).toBe(78);
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stderr).toMatch(/PORTER_REDIS_UNSUITABLE/);
  });

  it('REDIS_CLUSTER_NODES naming a single Redis: says so', async () => {
    const node = new URL(testRedisUrl()).host;
    await expect(checkRedis(loadEnv({ REDIS_CLUSTER_NODES: node }))).rejects.toMatchObject({
      code: 'PORTER_REDIS_UNSUITABLE',
      message: expect.stringMatching(/is a single Redis, not a Redis Cluster: set REDIS_URL/),
    });
  });

  it('REDIS_SENTINELS naming a data node: says so', async () => {
    const node = new URL(testRedisUrl()).host;
    await expect(
      checkRedis(loadEnv({ REDIS_SENTINELS: node, REDIS_SENTINEL_NAME: 'x' })),
    ).rejects.toMatchObject({ code: 'PORTER_REDIS_UNSUITABLE' });
  });

  it('REDIS_SENTINELS without REDIS_SENTINEL_NAME is a configuration error', () => {
    expect(() => loadEnv({ REDIS_SENTINELS: '127.0.0.1:26379' })).toThrow(/^REDIS_SENTINEL_NAME:/);
  });
});
