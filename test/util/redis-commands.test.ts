import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  addToHashExpiring,
  defineScript,
  readTwoHashes,
  setHashExpiring,
} from '../../src/util/redis-commands.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

const url = testRedisUrl();
const prefix = freshPrefix('scripts');
let redis: Redis;

beforeAll(() => {
  // porter's own connections auto-pipeline: commands of one tick share one write
  redis = new Redis(url, { enableAutoPipelining: true });
});
afterAll(async () => {
  redis.disconnect();
  await deletePrefix(url, prefix);
});

describe('porter scripts on an auto-pipelining connection', () => {
  it('run right when first used in a tick whose pipeline is already open', async () => {
    const plain = `${prefix}:plain`;
    const hash = `${prefix}:hash`;
    const counts = `${prefix}:counts`;
    const replies = await Promise.all([
      redis.set(plain, 'one'),
      setHashExpiring(redis, hash, ['a', '1', 'b', '2'], 60),
      addToHashExpiring(redis, counts, ['n', 2], 60),
      redis.get(plain),
    ]);
    expect(replies).toEqual(['OK', undefined, undefined, 'one']);
    expect(await redis.hgetall(hash)).toEqual({ a: '1', b: '2' });
    expect(await readTwoHashes(redis, hash, counts)).toEqual([
      ['a', '1', 'b', '2'],
      ['n', '2'],
    ]);
    expect(await redis.ttl(counts)).toBeGreaterThan(0);
  });

  it('write a hash of any size, beyond what one Lua unpack takes', async () => {
    const hash = `${prefix}:large`;
    const pairs = Array.from({ length: 10_001 }, (_, index) => [`f${index}`, `v${index}`]).flat();
    await setHashExpiring(redis, hash, pairs, 60);
    expect(await redis.hlen(hash)).toBe(10_001);
    expect(await redis.hget(hash, 'f0')).toBe('v0');
    expect(await redis.hget(hash, 'f10000')).toBe('v10000');
    expect(await redis.ttl(hash)).toBeGreaterThan(0);
  });

  it('load a script Redis does not know, then call it by its hash', async () => {
    // a body no other test uses, so Redis cannot know it yet
    const lua = `-- ${prefix}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`;
    const sha = createHash('sha1').update(lua).digest('hex');
    expect(await redis.script('EXISTS', sha)).toEqual([0]);
    const add = defineScript(redis, { keys: 1, lua });
    const key = `${prefix}:n`;
    expect(await Promise.all([add(key, 2), redis.incr(key), add(key, 3)])).toEqual([2, 3, 6]);
    expect(await redis.script('EXISTS', sha)).toEqual([1]);
    expect(await add(key, 4)).toBe(10);
  });

  it('pass a script error through', async () => {
    const fail = defineScript(redis, { keys: 0, lua: `return redis.error_reply('${prefix} no')` });
    await expect(fail()).rejects.toThrow(`${prefix} no`);
  });
});
