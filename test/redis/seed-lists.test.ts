/**
 * A seed list (REDIS_CLUSTER_NODES, REDIS_SENTINELS) whose first node is dead: every porter
 * process still starts, on a real 3-master Cluster and a real Sentinel set, and says which
 * listed nodes did not answer. Only when no listed node answers is Redis unavailable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { checkRedis } from '../../src/redis/check-redis.js';
import { runPorter } from '../helpers/porter-cli.js';
import { freshPrefix } from '../helpers/redis.js';
import {
  freePort,
  startRedisCluster,
  startSentinelSet,
  type RedisCluster,
  type SentinelSet,
} from '../helpers/redis-topology.js';

let cluster: RedisCluster;
let sentinels: SentinelSet;
/** A port nothing listens on: a node that is dead. */
let dead: string;

beforeAll(async () => {
  [cluster, sentinels] = await Promise.all([startRedisCluster(), startSentinelSet()]);
  dead = `127.0.0.1:${await freePort()}`;
}, 120_000);
afterAll(async () => {
  await Promise.all([cluster?.stop(), sentinels?.stop()]);
});

describe('a seed list whose first node is dead', () => {
  it('Cluster: the check passes and names the dead node', async () => {
    const warnings: string[] = [];
    await checkRedis(loadEnv({ REDIS_CLUSTER_NODES: `${dead},${cluster.nodes}` }), {
      warn: (message) => warnings.push(message),
    });
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^REDIS_CLUSTER_NODES: ${dead} does not answer \\(.+\\); going on with`),
      ),
    ]);
  });

  it('Cluster: a porter command starts, says which node did not answer, and exits 0', async () => {
    const cli = await runPorter(['list'], {
      REDIS_CLUSTER_NODES: `${dead},${cluster.nodes}`,
      PORTER_PREFIX: freshPrefix('seed'),
      LOG_LEVEL: 'warn',
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stderr).toContain(`${dead} does not answer`);
    // a dead seed node is no outage: the others answer
    expect(cli.stderr).not.toMatch(/went away/);
  }, 30_000);

  it('Sentinel: the check passes and names the dead Sentinel; a command exits 0', async () => {
    const settings = {
      REDIS_SENTINELS: `${dead},${sentinels.sentinels}`,
      REDIS_SENTINEL_NAME: sentinels.name,
    };
    const warnings: string[] = [];
    await checkRedis(loadEnv(settings), { warn: (message) => warnings.push(message) });
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^REDIS_SENTINELS: ${dead} does not answer`)),
    ]);
    const cli = await runPorter(['list'], {
      ...settings,
      PORTER_PREFIX: freshPrefix('seed'),
      LOG_LEVEL: 'warn',
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stderr).toContain(`${dead} does not answer`);
  }, 30_000);

  it('no listed node answers: unavailable, each node named with why', async () => {
    const other = `127.0.0.1:${await freePort()}`;
    await expect(
      checkRedis(loadEnv({ REDIS_CLUSTER_NODES: `${dead},${other}` }), { timeoutMs: 1_000 }),
    ).rejects.toMatchObject({
      code: 'PORTER_REDIS_UNAVAILABLE',
      message: expect.stringMatching(new RegExp(`${dead}: .+; ${other}: `)),
    });
  });
});
