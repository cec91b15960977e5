/**
 * A master of a real Cluster (3 masters, 3 replicas) killed while porter writes to every master:
 * its replica takes over, and the process says once that Redis went away and once that it is
 * back, as it does for a single Redis.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPorterContext, type PorterContext } from '../../src/app/context.js';
import { loadEnv } from '../../src/config/env.js';
import { command } from '../helpers/redis-node.js';
import { freshPrefix, waitFor } from '../helpers/redis.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-topology.js';

let cluster: RedisCluster;
let context: PorterContext | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster({ replicas: 1 });
}, 90_000);
afterAll(async () => {
  await context?.close();
  await cluster?.stop();
});

describe('a Cluster master lost', () => {
  it('one "went away" line, then one "is back" once its replica serves its slots', async () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString().split('\n')) {
          if (text) lines.push(JSON.parse(text) as { level: number; msg: string });
        }
        done();
      },
    });
    const prefix = freshPrefix('failover');
    context = await createPorterContext(
      loadEnv({ REDIS_CLUSTER_NODES: cluster.nodes, PORTER_PREFIX: prefix }),
      { logger: pino({ level: 'info' }, sink) },
    );
    const { redis } = context;
    // writes to keys of every master, as a worker's batches make them
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await Promise.all(
          Array.from({ length: 30 }, (_, index) =>
            redis.set(`${prefix}:{k${index}}`, String(written)).catch(() => undefined),
          ),
        );
        written++;
      }
    })();
    await waitFor(() => (written > 3 ? true : undefined), { what: 'writes to every master' });
    const masters: number[] = [];
    for (const port of cluster.ports) {
      if (String(await command(port, 'ROLE')).startsWith('master')) masters.push(port);
    }
    await cluster.kill(masters[0]!);
    await waitFor(() => (context!.redisWatch.down ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the outage told',
    });
    await waitFor(() => (context!.redisWatch.down ? undefined : true), {
      timeoutMs: 60_000,
      what: 'Redis back',
    });
    const before = written;
    await waitFor(() => (written > before + 3 ? true : undefined), { what: 'writes again' });
    writing = false;
    await writer;
    const away = lines.filter((line) => line.msg.startsWith('Redis went away'));
    const back = lines.filter((line) => line.msg.startsWith('Redis is back'));
    expect(away).toHaveLength(1);
    expect(back).toHaveLength(1);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  }, 120_000);
});
