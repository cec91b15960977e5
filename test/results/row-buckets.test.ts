import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import {
  appendEntries,
  bucketEntry,
  bucketOf,
  bucketPiece,
  compactBuckets,
  parseBucket,
  parseStoredBucket,
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

  it('reads frames and text mixed in one bucket, in the order written', () => {
    const found = new Map<number, string>();
    const entries = (rows: number[], value: string): string =>
      rows.map((row) => bucketEntry(row, JSON.stringify({ row, value }))).join('');
    const frame = bucketPiece(entries([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'first'));
    expect(Buffer.isBuffer(frame) && frame[0]).toBe(0);
    // a value holding the frame's zero byte and the separators, as a hostile upload may
    const hostile = 'second\u0000\u001e\u001f';
    const text = bucketPiece(entries([3], hostile));
    expect(typeof text).toBe('string');
    const later = bucketPiece(entries([4, 5, 6, 7, 8, 9, 10, 11, 12, 13], `third${hostile}`));
    parseStoredBucket(Buffer.concat([frame as Buffer, Buffer.from(text), later as Buffer]), found);
    expect(found.size).toBe(13);
    expect(JSON.parse(found.get(1)!)).toEqual({ row: 1, value: 'first' });
    expect(JSON.parse(found.get(3)!)).toEqual({ row: 3, value: hostile });
    expect(JSON.parse(found.get(4)!)).toEqual({ row: 4, value: `third${hostile}` });
    expect(JSON.parse(found.get(13)!)).toEqual({ row: 13, value: `third${hostile}` });
    // a frame cut short is refused, not read as something else
    expect(() => parseStoredBucket((frame as Buffer).subarray(0, 20), found)).toThrow(RangeError);
  });

  it('writes a batch deflated, appends, replaces, and compacts only buckets of much text', async () => {
    const key = `${prefix}:undo`;
    const rows = Array.from({ length: 200 }, (_, index) => index + 1);
    const entries = rows.map((row): [number, string] => [row, JSON.stringify({ row, who: 'x' })]);
    await appendEntries(redis, key, entries, 60);
    await appendEntries(redis, key, [[70, '"replaced"']], 60);
    // one field per bucket of 64 rows, not one per row, each written as one frame
    expect(await redis.hlen(key)).toBe(4);
    expect(await redis.ttl(key)).toBeGreaterThan(0);
    expect((await redis.hgetBuffer(key, 'b0'))![0]).toBe(0);
    const textBytes = entries.reduce(
      (sum, [row, value]) => sum + bucketEntry(row, value).length,
      0,
    );
    expect(Number(await redis.memory('USAGE', key))).toBeLessThan(textBytes / 2);
    const before = await readBuckets(redis, key, [0, 1, 2, 3]);
    expect(before.size).toBe(200);
    expect(before.get(70)).toBe('"replaced"');
    expect(before.get(71)).toBe('{"row":71,"who":"x"}');
    // buckets written in frames are as small as they get: nothing to compact
    expect(await compactBuckets(redis, key)).toBe(0);

    // entries written one at a time are text, compacted once nothing more comes
    const single = `${prefix}:single`;
    for (const [row, value] of entries) await appendEntries(redis, single, [[row, value]], 60);
    await appendEntries(redis, single, [[70, '"replaced"']], 60);
    const plainBytes = Number(await redis.memory('USAGE', single));
    // bucket 3 holds rows 193–200 only: too little text to gain by it
    expect(await compactBuckets(redis, single)).toBe(3);
    expect((await redis.hkeys(single)).sort()).toEqual(['b3', 'z0', 'z1', 'z2']);
    expect(Number(await redis.memory('USAGE', single))).toBeLessThan(plainBytes / 2);
    expect(await readBuckets(redis, single, [0, 1, 2, 3])).toEqual(before);
    // compacting again finds nothing to do, and a compacted bucket takes no more entries
    expect(await compactBuckets(redis, single)).toBe(0);
    // text appended beside a compacted form (as a held plan's results are) never replaces it
    const later = JSON.stringify('more'.repeat(10));
    const more = Array.from({ length: 40 }, (_, index) => bucketEntry(index + 1, later));
    await redis.hset(single, 'b0', more.join(''));
    expect(await compactBuckets(redis, single)).toBe(0);
    const both = await readBuckets(redis, single, [0]);
    expect(both.get(1)).toBe(later);
    expect(both.get(41)).toBe('{"row":41,"who":"x"}');
    await redis.hdel(single, 'b0');
    await appendEntries(redis, single, [[5, '"late"']], 60);
    expect((await readBuckets(redis, single, [0])).get(5)).toBe('{"row":5,"who":"x"}');
  });
});
