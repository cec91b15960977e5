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

export { waitFor } from './wait.js';
