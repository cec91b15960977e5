/**
 * A Redis that goes away and comes back is told once each way, however many connections see
 * it, and the queues' own errors never reach the log as errors.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createPorterContext, type PorterContext } from '../../src/app/context.js';
import { loadEnv } from '../../src/config/env.js';
import { waitFor } from '../helpers/redis.js';
import { freePort } from '../helpers/redis-topology.js';

let server: ChildProcess | undefined;
let context: PorterContext | undefined;

function startRedis(port: number): ChildProcess {
  return spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
}

async function stopRedis(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

afterAll(async () => {
  await context?.close();
  await stopRedis(server);
});

describe('a Redis outage in the log', () => {
  it('one warn line when Redis goes away, one when it is back, no error line', async () => {
    const port = await freePort();
    server = startRedis(port);
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString().split('\n')) {
          if (text) lines.push(JSON.parse(text) as { level: number; msg: string });
        }
        done();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    const env = loadEnv({ REDIS_URL: `redis://127.0.0.1:${port}`, PORTER_PREFIX: 'porter-outage' });
    await waitFor(
      async () => {
        try {
          context = await createPorterContext(env, { logger });
          return true;
        } catch {
          return undefined;
        }
      },
      { what: 'the private Redis' },
    );
    // the queue's connection is in use, as in a producer
    await context!.importQueue.getJobCounts();
    await stopRedis(server);
    await waitFor(() => (context!.redisWatch.down ? true : undefined), { what: 'the outage' });
    server = startRedis(port);
    await waitFor(() => (context!.redisWatch.down ? undefined : true), {
      timeoutMs: 30_000,
      what: 'Redis back',
    });
    const away = lines.filter((line) => line.msg.startsWith('Redis went away'));
    const back = lines.filter((line) => line.msg.startsWith('Redis is back'));
    expect(away).toHaveLength(1);
    expect(back).toHaveLength(1);
    expect(away[0]!.level).toBe(40);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  }, 60_000);
});
