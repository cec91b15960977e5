/**
 * A Sentinel client that follows failovers subscribes to `+switch-master` on every Sentinel;
 * closing it, or a duplicate of it (BullMQ makes its own), with QUIT ends those subscriptions
 * too, so a porter command on a Sentinel set exits once its work is done.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { createRedisConnection } from '../../src/redis/connect.js';
import { runPorter } from '../helpers/porter-cli.js';
import { command } from '../helpers/redis-node.js';
import { startSentinelSet, type SentinelSet } from '../helpers/redis-topology.js';
import { waitFor } from '../helpers/wait.js';

let sentinels: SentinelSet;

beforeAll(async () => {
  sentinels = await startSentinelSet();
}, 90_000);
afterAll(async () => {
  await sentinels?.stop();
});

/** Clients subscribed to something, over all Sentinels. */
async function subscribers(): Promise<number> {
  let count = 0;
  for (const node of sentinels.sentinels.split(',')) {
    const list = String(await command(Number(node.split(':')[1]), 'CLIENT', 'LIST'));
    count += list.split('\n').filter((line) => /\bsub=[1-9]/.test(line)).length;
  }
  return count;
}

describe('closing a Sentinel client', () => {
  it('QUIT on a connection and on a duplicate of it ends their Sentinel subscriptions', async () => {
    const env = loadEnv({
      REDIS_SENTINELS: sentinels.sentinels,
      REDIS_SENTINEL_NAME: sentinels.name,
    });
    const redis = createRedisConnection(env, 'commands');
    const duplicate = redis.duplicate();
    await Promise.all([redis.ping(), duplicate.ping()]);
    // each follows failovers through a subscription on each of the three Sentinels
    await waitFor(async () => ((await subscribers()) === 6 ? true : undefined), {
      what: 'the subscriptions',
    });
    await Promise.all([redis.quit(), duplicate.quit()]);
    await waitFor(async () => ((await subscribers()) === 0 ? true : undefined), {
      what: 'the subscriptions to end',
    });
    expect(await subscribers()).toBe(0);
  });

  it('a porter command on a Sentinel set exits when its work is done', async () => {
    const cli = await runPorter(['list'], {
      REDIS_SENTINELS: sentinels.sentinels,
      REDIS_SENTINEL_NAME: sentinels.name,
      PORTER_PREFIX: 'porter-test:sentinel-close',
    });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
  });
});
