import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import {
  appendEntries,
  bucketOf,
  compactBuckets,
  parseBucket,
  readBuckets,
} from '../../src/results/row-buckets.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

const url = testRedisUrl();
const prefix = freshPrefix('row-buckets');
let redis: Redis;

beforeAll(() => {
  redis = new Redis(url);
});
afterAll(async () => {
  await deletePrefix(url, prefix);
  redis.disconnect();
});

describe('rows kept a bucket at a time', () => {
  it('puts 64 rows in a bucket', () => {
    expect([1, 64, 65, 128, 129].map(bucketOf)).toEqual([0, 0, 1, 1, 2]);
  });

  it('reads back values holding any text JSON can hold, the last entry of a row winning', () => {
    const found = new Map<number, string>();
    parseBucket('\u001e1\u001f{"a":"x\\u001e"}\u001e2\u001f[]\u001e1\u001f"again"', found);
    expect([...found]).toEqual([
      [1, '"again"'],
      [2, '[]'],
    ]);
  });

  it('appends, replaces, compacts, and reads both forms alike', async () => {
    const key = `${prefix}:undo`;
    const rows = Array.from({ length: 200 }, (_, index) => index + 1);
    await appendEntries(
      redis,
      key,
      rows.map((row) => [row, JSON.stringify({ row })]),
      60,
    );
    await appendEntries(redis, key, [[70, '"replaced"']], 60);
    // one field per bucket of 64 rows, not one per row
    expect(await redis.hlen(key)).toBe(4);
    expect(await redis.ttl(key)).toBeGreaterThan(0);
    const before = await readBuckets(redis, key, [0, 1, 2, 3]);
    expect(before.size).toBe(200);
    expect(before.get(70)).toBe('"replaced"');

    const plainBytes = Number(await redis.memory('USAGE', key));
    expect(await compactBuckets(redis, key)).toBe(4);
    expect((await redis.hkeys(key)).sort()).toEqual(['z0', 'z1', 'z2', 'z3']);
    expect(Number(await redis.memory('USAGE', key))).toBeLessThan(plainBytes / 2);
    expect(await readBuckets(redis, key, [0, 1, 2, 3])).toEqual(before);
    // compacting again finds nothing to do, and a compacted bucket takes no more entries
    expect(await compactBuckets(redis, key)).toBe(0);
    await appendEntries(redis, key, [[5, '"late"']], 60);
    expect((await readBuckets(redis, key, [0])).get(5)).toBe('{"row":5}');
  });
});
