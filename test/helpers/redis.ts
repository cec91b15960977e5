/** A fresh key prefix per test file on the shared test Redis, removed afterwards. */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { deleteKeysWithPrefix } from '../../src/util/redis.js';

export function testRedisUrl(): string {
  return inject('redisUrl');
}

/** A prefix no other test file uses. */
export function freshPrefix(label = 'test'): string {
  return `porter-test:${label}:${randomUUID().slice(0, 8)}`;
}

/** Deletes every key under the prefix. */
export function deletePrefix(url: string, prefix: string): Promise<void> {
  return deleteKeysWithPrefix(url, prefix);
}

/** Polls until the check returns a value other than undefined, or fails after the deadline. */
export async function waitFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 20_000, intervalMs = 25, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
