import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmgetMany } from '../../src/util/redis.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

let redis: Redis;
const prefix = freshPrefix('hmget-many');

beforeAll(() => {
  redis = new Redis(testRedisUrl());
});
afterAll(async () => {
  await redis?.quit();
  await deletePrefix(testRedisUrl(), prefix);
});

describe('hmgetMany', () => {
  it('reads more fields than one spread of arguments can hold (a group with 150,000 members)', async () => {
    const key = `${prefix}:hash`;
    await redis.hset(key, '7', 'seven', '149999', 'last');
    const fields = Array.from({ length: 150_000 }, (_, index) => String(index));
    const values = await hmgetMany(redis, key, fields);
    expect(values).toHaveLength(150_000);
    expect(values[7]).toBe('seven');
    expect(values[149_999]).toBe('last');
    expect(values.filter((value) => value !== null)).toHaveLength(2);
    expect(await hmgetMany(redis, key, [])).toEqual([]);
  });
});
