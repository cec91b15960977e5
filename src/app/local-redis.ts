/**
 * A throw-away redis-server on a free port, without persistence: `porter dev` starts one when no
 * Redis answers, a bench one of its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { assertRedisAnswers } from '../util/redis.js';
import { freePort } from '../util/free-port.js';

export interface LocalRedis {
  url: string;
  /** The redis-server process, for a bench reading what it costs. */
  pid: number | undefined;
  stop(): Promise<void>;
}

/** Starts redis-server from PATH, or returns undefined when there is none. */
export async function startLocalRedis(): Promise<LocalRedis | undefined> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const spawned = await new Promise<boolean>((resolve) => {
    child.once('spawn', () => resolve(true));
    child.once('error', () => resolve(false));
  });
  if (!spawned) return undefined;
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      await assertRedisAnswers(url, 500);
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        child.kill();
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
