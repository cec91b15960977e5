import { inflateRawSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordResult } from '../../src/model/import.js';
import { bucketEntry, parseStoredBucket } from '../../src/results/row-buckets.js';
import { OPTIONS, range, result, staged, storeFixture } from './store-fixture.js';

const fixture = storeFixture('import-results');
const { store, redis } = fixture;

afterAll(() => fixture.close());

async function collect(items: AsyncIterable<RecordResult>): Promise<RecordResult[]> {
  const all: RecordResult[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Deterministic shuffle, so results arrive out of input order as they do from workers. */
function shuffled(rows: number[]): number[] {
  const copy = [...rows];
  let seed = 7;
  for (let index = copy.length - 1; index > 0; index--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const other = seed % (index + 1);
    [copy[index], copy[other]] = [copy[other], copy[index]];
  }
  return copy;
}

const statusOf = (row: number): RecordResult['status'] =>
  row % 10 === 0 ? 'failed' : row % 25 === 0 ? 'skipped' : 'succeeded';

describe('results()', () => {
  it('reads 2,500 results in input order across chunks, with a status filter', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.stage(info.id, range(1, 2500).map(staged));
    await store.markReceived(info.id, { total: 2500, batches: 25 });
    await store.recordResults(
      info.id,
      shuffled(range(1, 2500)).map((row) => result(row, statusOf(row))),
    );
    expect((await store.get(info.id))?.state).toBe('completed_with_errors');

    const all = await collect(store.results(info.id));
    expect(all.map((item) => item.row)).toEqual(range(1, 2500));
    expect(all[41]).toEqual(result(42, 'succeeded'));
    const small = await collect(store.results(info.id, { chunkSize: 7 }));
    expect(small).toEqual(all);

    const failed = await collect(store.results(info.id, { status: ['failed'] }));
    expect(failed.map((item) => item.row)).toEqual(range(1, 250).map((n) => n * 10));
    expect(failed[0]).toMatchObject({ status: 'failed', errorCode: 'ALREADY_EXISTS' });
    const skippedOrFailed = await collect(
      store.results(info.id, { status: ['skipped', 'failed'], chunkSize: 300 }),
    );
    expect(skippedOrFailed).toHaveLength(250 + 50);
  });

  it('skips rows without a result while the import runs', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.markReceived(info.id, { total: 5, batches: 1 });
    await store.recordResults(info.id, [result(2), result(4)]);
    const rows = (await collect(store.results(info.id))).map((item) => item.row);
    expect(rows).toEqual([2, 4]);
  });

  it('reads results recorded before the total is known', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.recordResults(info.id, [result(3, 'failed'), result(1, 'failed')]);
    const rows = (await collect(store.results(info.id))).map((item) => item.row);
    expect(rows).toEqual([1, 3]);
  });

  it('writes a batch of results deflated once, and compacts a bucket written a row at a time once full', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.markReceived(info.id, { total: 200, batches: 2 });
    const key = store.keys(info.id).results;
    // rows 1–63 one write each: a piece of text each, in bucket 0
    for (const row of range(1, 63)) await store.recordResults(info.id, [result(row)]);
    expect(await redis.hkeys(key)).toEqual(['b0']);
    expect((await redis.hgetBuffer(key, 'b0'))!.includes(0)).toBe(false);
    // the 64th row fills the bucket, which is then deflated; rows 65–128 go as one write: a
    // frame of deflated entries (a zero byte first), never read back to be shrunk
    await store.recordResults(
      info.id,
      range(64, 128).map((row) => result(row)),
    );
    expect((await redis.hkeys(key)).sort()).toEqual(['b1', 'z0']);
    const frame = (await redis.hgetBuffer(key, 'b1'))!;
    expect(frame[0]).toBe(0);
    const text = (await collect(store.results(info.id)))
      .slice(64)
      .map((item) => JSON.stringify(item))
      .join('');
    expect(frame.length).toBeLessThan(text.length / 4);
    // a result written again to a deflated bucket changes nothing and counts nothing
    const { written } = await store.recordResults(info.id, [result(5, 'failed')]);
    expect(written).toBe(0);
    const all = await collect(store.results(info.id));
    expect(all.map((item) => item.row)).toEqual(range(1, 128));
    expect(all[4]).toEqual(result(5));
    expect(all[99]).toEqual(result(100));
    expect(await store.missingRows(info.id, [5, 64, 70, 128, 129, 150])).toEqual([129, 150]);
  });

  it('reports a settled import row with no result as unprocessed, not silently', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.markReceived(info.id, { total: 40, batches: 1 });
    await store.recordResults(
      info.id,
      range(1, 40).map((row) => result(row)),
    );
    // row 2's entry goes missing from its bucket, whatever form the bucket is kept in
    const key = store.keys(info.id).results;
    const [field] = await redis.hkeys(key);
    const stored = (await redis.hgetBuffer(key, field!))!;
    const entries = new Map<number, string>();
    parseStoredBucket(field === 'z0' ? inflateRawSync(stored) : stored, entries);
    entries.delete(2);
    await redis.hdel(key, field!);
    await redis.hset(key, 'b0', [...entries].map(([row, json]) => bucketEntry(row, json)).join(''));
    const all = await collect(store.results(info.id));
    expect(all).toHaveLength(40);
    expect(all[1]).toMatchObject({ row: 2, status: 'unprocessed', errorCode: 'PORTER_INTERNAL' });
    expect(await collect(store.results(info.id, { status: ['succeeded'] }))).toHaveLength(39);
  });

  it('fails for an unknown import', async () => {
    await expect(collect(store.results('imp_gone'))).rejects.toThrow(/no import imp_gone/);
  });

  it('stops reading when the consumer stops', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.markReceived(info.id, { total: 30, batches: 1 });
    await store.recordResults(
      info.id,
      range(1, 30).map((row) => result(row)),
    );
    const first: number[] = [];
    for await (const item of store.results(info.id, { chunkSize: 4 })) {
      first.push(item.row);
      if (first.length === 5) break;
    }
    expect(first).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('progress()', () => {
  it('gives done, total, counts and a rate', async () => {
    const info = await store.create({ options: OPTIONS });
    expect(await store.progress(info.id)).toMatchObject({ totalKnown: false, done: 0 });
    await store.markReceived(info.id, { total: 4, batches: 1 });
    await store.transition(info.id, ['queued'], 'running');
    await store.recordResults(info.id, [result(1), result(2, 'failed')]);
    const progress = await store.progress(info.id);
    expect(progress).toMatchObject({
      state: 'running',
      totalKnown: true,
      total: 4,
      done: 2,
      settled: false,
      counts: { succeeded: 1, failed: 1, skipped: 0, unprocessed: 0, planned: 0 },
    });
    expect(progress.startedAt).toBeDefined();
    expect(progress.ratePerSecond).toBeGreaterThan(0);
    expect(progress.etaSeconds).toBeGreaterThanOrEqual(0);
  });
});
