import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { SendJournal } from '../../src/execute/send-journal.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

const url = testRedisUrl();
const prefix = freshPrefix('journal');
let redis: Redis;
let journal: SendJournal;

beforeAll(() => {
  redis = new Redis(url);
  journal = new SendJournal(redis, prefix, 60);
});
afterAll(async () => {
  redis.disconnect();
  await deletePrefix(url, prefix);
});

describe('SendJournal', () => {
  it('tells the rows marked sent from the others, and keeps them one bit each with the TTL', async () => {
    await journal.markSent('imp_a', [1, 2, 3, 1000]);
    await journal.markSent('imp_a', [3, 500_000]);
    expect(await journal.sentAmong('imp_a', [4, 3, 1, 999, 1000, 500_000, 500_001])).toEqual([
      3, 1, 1000, 500_000,
    ]);
    const key = `${prefix}:import:{imp_a}:sent-rows`;
    expect(await redis.type(key)).toBe('string');
    expect(await redis.bitcount(key)).toBe(5);
    // 500,000 rows in about 62 KB
    expect(await redis.strlen(key)).toBe(Math.ceil(500_001 / 8));
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it('marks stretches of rows, rows given twice, out of order or far apart', async () => {
    const rows = [...Array.from({ length: 70 }, (_, index) => 2 + index), 40, 40, 9, 100_000];
    await journal.markSent('imp_runs', rows);
    const key = `${prefix}:import:{imp_runs}:sent-rows`;
    expect(await redis.bitcount(key)).toBe(71);
    for (const row of [1, 2, 71, 72, 100_000]) {
      expect(await redis.getbit(key, row)).toBe(rows.includes(row) ? 1 : 0);
    }
    const asked = [1, 72, 71, 2, 99_999, 100_000, 4_000_000];
    expect(await journal.sentAmong('imp_runs', asked)).toEqual([71, 2, 100_000]);
    await redis.del(key);
  });

  it('knows nothing of another import', async () => {
    expect(await journal.sentAmong('imp_b', [1, 2, 3])).toEqual([]);
  });

  it('still reads the set an earlier version kept', async () => {
    await redis.sadd(`${prefix}:import:{imp_old}:sent`, '7', '9');
    await journal.markSent('imp_old', [8]);
    expect(await journal.sentAmong('imp_old', [7, 8, 9, 10])).toEqual([7, 8, 9]);
  });

  it('refuses a row that is no bit offset, before Redis', async () => {
    for (const row of [0, -1, 1.5, 2 ** 32]) {
      await expect(journal.markSent('imp_c', [row])).rejects.toThrow(/cannot be journaled/);
    }
    expect(await redis.exists(`${prefix}:import:{imp_c}:sent-rows`)).toBe(0);
  });
});

describe('SendJournal.markSentWhile', () => {
  it("marks the rows only while the import's state lets a call go, and says the state", async () => {
    const meta = `${prefix}:import:{imp_w}:meta`;
    await redis.hset(meta, 'state', 'running');
    expect(await journal.markSentWhile('imp_w', ['running'], [1, 2])).toEqual({ state: 'running' });
    await redis.hset(meta, 'state', 'cancelled', 'reason', 'by hand');
    expect(await journal.markSentWhile('imp_w', ['running'], [3])).toEqual({
      state: 'cancelled',
      reason: 'by hand',
    });
    expect(await journal.sentAmong('imp_w', [1, 2, 3])).toEqual([1, 2]);
    expect(await redis.ttl(`${prefix}:import:{imp_w}:sent-rows`)).toBeGreaterThan(0);
  });

  it('marks nothing for an import that is gone', async () => {
    expect(await journal.markSentWhile('imp_gone', ['running'], [1])).toBeUndefined();
    expect(await journal.sentAmong('imp_gone', [1])).toEqual([]);
  });
});
