/** Redis connections: one place that builds them and says clearly when Redis is not there. */
import { Redis } from 'ioredis';
import { checkRedis } from '../redis/check-redis.js';
import { singleRedis, type RedisSettings } from '../redis/connect.js';

/**
 * Checks once that Redis answers and is what the settings say (a URL: one node); throws
 * PORTER_REDIS_UNAVAILABLE with how to start one, or PORTER_REDIS_UNSUITABLE.
 */
export async function assertRedisAnswers(
  where: string | RedisSettings,
  timeoutMs = 3_000,
): Promise<void> {
  await checkRedis(typeof where === 'string' ? singleRedis(where) : where, {
    timeoutMs,
    answersOnly: true,
  });
}

/** Deletes every key under the prefix (tests and benchmarks clean up after themselves). */
export async function deleteKeysWithPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Fields per HMGET: a command's arguments are spread, and a spread of ~100,000 overflows the stack. */
const HMGET_CHUNK = 5_000;

/** HMGET of any number of fields, in commands of at most 5,000 fields. */
export async function hmgetMany(
  redis: Redis,
  key: string,
  fields: readonly string[],
): Promise<(string | null)[]> {
  if (fields.length <= HMGET_CHUNK) return fields.length === 0 ? [] : redis.hmget(key, ...fields);
  const parts: Promise<(string | null)[]>[] = [];
  for (let start = 0; start < fields.length; start += HMGET_CHUNK) {
    parts.push(redis.hmget(key, ...fields.slice(start, start + HMGET_CHUNK)));
  }
  return (await Promise.all(parts)).flat();
}
