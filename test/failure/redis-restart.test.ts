import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** A redis-server with append-only persistence in its own directory, as in docker-compose. */
async function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
    ],
    { stdio: 'ignore' },
  );
  await waitFor(
    async () => {
      const probe = new Redis({
        port,
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' ? true : undefined;
      } catch {
        return undefined;
      } finally {
        probe.disconnect();
      }
    },
    { what: 'redis-server to answer' },
  );
  return child;
}

let pipeline: Pipeline | undefined;
let redis: ChildProcess | undefined;
let dir: string | undefined;
afterAll(async () => {
  await pipeline?.close();
  redis?.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.runIf(hasRedisServer)(
  'Redis restarted in the middle of an import (append-only persistence on)',
  () => {
    it('workers reconnect and the import completes with exact counts', async () => {
      dir = await mkdtemp(join(tmpdir(), 'porter-redis-'));
      const port = await freePort();
      redis = await startRedis(port, dir);
      pipeline = await startPipeline({
        redisUrl: `redis://127.0.0.1:${port}`,
        sandbox: { faults: { latencyMs: 20 } },
      });
      const total = 3_000;
      const rows = Array.from({ length: total }, (_, index) => [`restart.user${index + 1}`]);
      const submitted = await pipeline.submit(csv(['username'], rows), {
        resource: 'users',
        mode: 'create',
      });
      await waitFor(
        async () => {
          const info = await pipeline!.context.store.get(submitted.id);
          return info && info.done >= total * 0.2 ? true : undefined;
        },
        { timeoutMs: 60_000 },
      );
      redis.kill('SIGTERM'); // redis-server flushes the append-only file and exits
      await once(redis, 'exit');
      redis = await startRedis(port, dir);
      const info = await pipeline.waitFinal(submitted.id, 120_000);
      expect(info.state).toBe('completed');
      expect(info.counts).toEqual({
        succeeded: total,
        failed: 0,
        skipped: 0,
        unprocessed: 0,
        planned: 0,
      });
      const created = pipeline.sandbox.store.users();
      expect(created).toHaveLength(total);
      expect(new Set(created.map((user) => user.username)).size).toBe(total);
    }, 180_000);
  },
);
