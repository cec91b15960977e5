import { afterAll, describe, expect, it } from 'vitest';
import { isPorterError } from '../../src/errors/porter-error.js';
import { importIndexKey } from '../../src/results/import-keys.js';
import { OPTIONS, range, results, staged, storeFixture } from './store-fixture.js';

const fixture = storeFixture('import-store', 3600);
const { store, redis } = fixture;

afterAll(() => fixture.close());

describe('ImportStore create, get, list', () => {
  it('creates an import receiving, with its options and source', async () => {
    const info = await store.create({ options: OPTIONS, source: 'users.csv', columns: ['a', 'b'] });
    expect(info.id).toMatch(/^imp_[0-9a-z]{22}$/);
    expect(info).toMatchObject({
      state: 'receiving',
      options: OPTIONS,
      source: 'users.csv',
      total: 0,
      done: 0,
      columns: ['a', 'b'],
      counts: { succeeded: 0, failed: 0, skipped: 0, unprocessed: 0, planned: 0 },
    });
    expect(info.createdAt).toBe(info.updatedAt);
    expect(await store.get(info.id)).toEqual(info);
  });

  it('answers undefined for unknown or malformed ids', async () => {
    expect(await store.get('imp_nothere')).toBeUndefined();
    expect(await store.get('../etc:passwd')).toBeUndefined();
  });

  it('refuses a second import with the same id', async () => {
    await store.create({ id: 'fixed-id', options: OPTIONS });
    const error = await store.create({ id: 'fixed-id', options: OPTIONS }).catch((e) => e);
    expect(isPorterError(error) && error.code).toBe('PORTER_CONFLICT');
    const invalid = await store.create({ id: 'a:b', options: OPTIONS }).catch((e) => e);
    expect(isPorterError(invalid) && invalid.code).toBe('PORTER_USAGE');
  });

  it('lists newest first, pages with offset, and forgets expired imports', async () => {
    const created = [];
    for (let index = 0; index < 3; index++) {
      created.push(await store.create({ options: OPTIONS, retryOf: `r${index}` }));
    }
    const ids = created.map((info) => info.id).reverse();
    const listed = await store.list({ limit: 3 });
    expect(listed.map((info) => info.id)).toEqual(ids);
    expect((await store.list({ limit: 1, offset: 1 }))[0].id).toBe(ids[1]);

    await redis.del(store.keys(ids[0]).meta);
    const after = await store.list({ limit: 100 });
    expect(after.map((info) => info.id)).not.toContain(ids[0]);
    expect(await redis.zscore(importIndexKey(store.prefix), ids[0])).toBeNull();
  });

  it('drops expired imports from the oldest end of the index on create', async () => {
    const [oldest] = await redis.zrange(importIndexKey(store.prefix), 0, '0');
    await store.delete(oldest);
    await redis.zadd(importIndexKey(store.prefix), 0, oldest);
    await store.create({ options: OPTIONS });
    expect(await redis.zscore(importIndexKey(store.prefix), oldest)).toBeNull();
  });

  it('records the column order later', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.setColumns(info.id, ['username', 'email']);
    expect((await store.get(info.id))?.columns).toEqual(['username', 'email']);
    const error = await store.setColumns('imp_missing', ['x']).catch((e) => e);
    expect(isPorterError(error) && error.code).toBe('PORTER_NOT_FOUND');
  });
});

describe('ImportStore staging', () => {
  it('keeps staged records in upload order across calls and chunks', async () => {
    const info = await store.create({ options: OPTIONS });
    expect(await store.stage(info.id, range(1, 1500).map(staged))).toBe(1500);
    expect(await store.stage(info.id, range(1501, 2500).map(staged))).toBe(2500);
    expect(await store.stagedCount(info.id)).toBe(2500);
    expect((await store.readStaged(info.id, 0, 3)).map((item) => item.row)).toEqual([1, 2, 3]);
    const tail = await store.readStaged(info.id, 2495, 10);
    expect(tail.map((item) => item.row)).toEqual(range(2496, 2500));
    expect(tail[0]).toEqual(staged(2496));
    expect(await store.readStaged(info.id, 999, 2)).toEqual([staged(1000), staged(1001)]);
  });

  it('stages only while receiving', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.stage(info.id, [staged(1)]);
    await store.markReceived(info.id, { total: 1, batches: 1 });
    const error = await store.stage(info.id, [staged(2)]).catch((e) => e);
    expect(isPorterError(error) && error.code).toBe('PORTER_CONFLICT');
    const missing = await store.stage('imp_missing', [staged(1)]).catch((e) => e);
    expect(isPorterError(missing) && missing.code).toBe('PORTER_NOT_FOUND');
  });
});

describe('ImportStore TTL and delete', () => {
  it('gives every key a TTL and refreshes it when the import finishes', async () => {
    const info = await store.create({ options: OPTIONS });
    const keys = store.keys(info.id);
    expect(await redis.ttl(keys.meta)).toBeGreaterThan(3500);
    await store.stage(info.id, [staged(1), staged(2)]);
    expect(await redis.ttl(keys.staged)).toBeGreaterThan(3500);
    await store.markReceived(info.id, { total: 2, batches: 1 });

    await redis.expire(keys.meta, 100);
    await store.recordResults(info.id, results([1, 2]));
    expect((await store.get(info.id))?.state).toBe('completed');
    for (const key of [keys.meta, keys.counts, keys.results]) {
      const ttl = await redis.ttl(key);
      expect(ttl).toBeGreaterThan(3500);
      expect(ttl).toBeLessThanOrEqual(3600);
    }
    expect(await redis.exists(keys.staged)).toBe(0);
  });

  it('deletes every key of an import', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.stage(info.id, [staged(1)]);
    await store.recordResults(info.id, results([1]));
    expect(await store.delete(info.id)).toBe(true);
    const keys = store.keys(info.id);
    expect(await redis.exists(keys.meta, keys.counts, keys.results, keys.staged)).toBe(0);
    expect(await store.get(info.id)).toBeUndefined();
    expect((await store.list({ limit: 100 })).map((item) => item.id)).not.toContain(info.id);
    expect(await store.delete(info.id)).toBe(false);
  });
});
