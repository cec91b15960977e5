/**
 * A short lock in Redis, for a step that must run in one process at a time across every process
 * of a deployment (two API processes opening the same plan). The lock is a key set with NX and a
 * lifetime, so a process that dies holding it frees it when the lifetime ends; it is released
 * only by its holder (its token compared in a script). A process that finds it taken tries again
 * a little later, up to `waitMs`, then fails with PORTER_BUSY.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { PorterError } from '../errors/porter-error.js';

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export interface RedisLockOptions {
  /** How long the lock lasts if its holder never releases it. */
  ttlMs: number;
  /** How long to try for the lock before giving up. */
  waitMs: number;
  /** Pause between tries. */
  retryMs?: number;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `step` holding the lock `key`; PORTER_BUSY when it stays taken for `waitMs`. */
export async function withRedisLock<T>(
  redis: Redis,
  key: string,
  options: RedisLockOptions,
  step: () => Promise<T>,
): Promise<T> {
  const token = randomUUID();
  const deadline = Date.now() + options.waitMs;
  while ((await redis.set(key, token, 'PX', options.ttlMs, 'NX')) !== 'OK') {
    if (Date.now() >= deadline) {
      throw new PorterError('PORTER_BUSY', `another process holds ${key}; try again shortly`);
    }
    await pause(options.retryMs ?? 25);
  }
  try {
    return await step();
  } finally {
    await redis.eval(RELEASE, 1, key, token);
  }
}
