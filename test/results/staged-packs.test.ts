import { afterAll, describe, expect, it } from 'vitest';
import { encodeStaged } from '../../src/results/import-codec.js';
import {
  packRange,
  packRecords,
  packSizeFor,
  unpackRecords,
} from '../../src/results/staged-packs.js';
import { OPTIONS, range, staged, storeFixture } from './store-fixture.js';

const fixture = storeFixture('staged-packs', 3600);
const { store, redis } = fixture;

afterAll(() => fixture.close());

const rowsOf = (records: { row: number }[]): number[] => records.map((record) => record.row);

describe('packs of staged records', () => {
  it('pack and unpack give back every window of records, whatever the chunks staged', () => {
    const records = range(1, 23).map((row) => `{"r":${row}}`);
    const asBuffer = (pack: string | Buffer): Buffer =>
      typeof pack === 'string' ? Buffer.from(pack) : pack;
    for (const size of [1, 2, 3, 5, 7, 8, 10, 23, 40]) {
      for (const split of [1, 2, 4, 9, 20]) {
        // staged chunk by chunk: each chunk fills the last pack first
        const list: Buffer[] = [];
        for (let at = 0; at < records.length; at += split) {
          const { fill, packs } = packRecords(at, size, records.slice(at, at + split));
          if (fill !== '') list[list.length - 1] = Buffer.concat([list.at(-1)!, Buffer.from(fill)]);
          list.push(...packs.map(asBuffer));
        }
        expect(list.length).toBe(Math.ceil(records.length / size));
        for (let start = 0; start < records.length; start++) {
          for (const count of [1, 2, size, 30]) {
            const [first, last] = packRange(start, count, size);
            const got = unpackRecords(list.slice(first, last + 1), start, count, size);
            expect(got).toEqual(records.slice(start, start + count));
          }
        }
      }
    }
  });

  it('deflates a pack written full and whole, and keeps the last one, which may grow, as text', () => {
    const records = range(1, 25).map((row) => `{"r":${row},"in":["user${row}","a@b.c"]}`);
    const { packs } = packRecords(0, 10, records);
    expect(packs.map((pack) => typeof pack)).toEqual(['object', 'object', 'string']);
    const [first] = packs as Buffer[];
    expect(first![0]).toBe(0);
    expect(first!.length).toBeLessThan(records.slice(0, 10).join('\n').length / 2);
  });

  it('a batch size gives the pack size, at most 1000 records', () => {
    expect(packSizeFor(100)).toBe(100);
    expect(packSizeFor(10_000)).toBe(1000);
    expect(packSizeFor(0)).toBe(1);
  });
});

describe('ImportStore staged packs', () => {
  it('keeps a batch of staged records as one list element, staged in any chunks', async () => {
    const info = await store.create({ options: { ...OPTIONS, batchSize: 3 } });
    for (const chunk of [[1, 2], [3, 4, 5, 6], [7], [8, 9, 10, 11, 12]]) {
      await store.stage(info.id, chunk.map(staged));
    }
    expect(await redis.llen(store.keys(info.id).staged)).toBe(4);
    expect(await store.stagedCount(info.id)).toBe(12);
    expect(rowsOf(await store.readStaged(info.id, 3, 3))).toEqual([4, 5, 6]);
    expect(rowsOf(await store.readStaged(info.id, 2, 7))).toEqual(range(3, 9));
    expect(rowsOf(await store.readStaged(info.id, 10, 100))).toEqual([11, 12]);
    expect(await store.readStaged(info.id, 12, 3)).toEqual([]);
    const [record] = await store.readStaged(info.id, 6, 1);
    expect(record).toEqual(staged(7));
  });

  it('a second process staging meanwhile is counted again, and nothing is staged twice', async () => {
    const info = await store.create({ options: { ...OPTIONS, batchSize: 4 } });
    const other = fixture.connect();
    await store.stage(info.id, [1, 2].map(staged));
    await other.stage(info.id, [3, 4, 5].map(staged));
    // the first store still counts 2 of its own: its script refuses, it reads 5 and goes on
    expect(await store.stage(info.id, [6, 7].map(staged))).toBe(7);
    expect(rowsOf(await store.readStaged(info.id, 0, 10))).toEqual(range(1, 7));
    expect(await redis.llen(store.keys(info.id).staged)).toBe(2);
  });

  it("a sync's server rows follow the upload's, and a preparation run again drops the earlier run's", async () => {
    const info = await store.create({ options: { ...OPTIONS, mode: 'sync', batchSize: 3 } });
    await store.stage(info.id, range(1, 5).map(staged));
    await store.markReceived(info.id, { total: 5, batches: 2 });
    expect(await store.beginServerRows(info.id)).toBe(5);
    await store.addServerRows(info.id, range(6, 9).map(staged));
    expect(rowsOf(await store.readStaged(info.id, 0, 20))).toEqual(range(1, 9));
    expect((await store.get(info.id))?.total).toBe(9);

    // run again (by another process): back to the upload's five, then other server rows
    const again = fixture.connect();
    expect(await again.beginServerRows(info.id)).toBe(5);
    expect(await again.stagedCount(info.id)).toBe(5);
    expect(await redis.llen(store.keys(info.id).staged)).toBe(2);
    await again.addServerRows(info.id, [20, 21].map(staged));
    expect(rowsOf(await again.readStaged(info.id, 0, 20))).toEqual([1, 2, 3, 4, 5, 20, 21]);
    expect((await again.get(info.id))?.total).toBe(7);
  });

  it('server rows after deflated packs, and a preparation run again, keep every record', async () => {
    const info = await store.create({ options: { ...OPTIONS, mode: 'sync', batchSize: 8 } });
    await store.stage(info.id, range(1, 16).map(staged));
    await store.stage(info.id, range(17, 20).map(staged));
    await store.markReceived(info.id, { total: 20, batches: 3 });
    const list = store.keys(info.id).staged;
    const firstBytes = async (): Promise<number[]> =>
      (await redis.lrangeBuffer(list, 0, -1)).map((pack) => pack[0]!);
    // two packs deflated, the last (partial) as text
    expect(await firstBytes()).toEqual([0, 0, '{'.charCodeAt(0)]);
    await store.beginServerRows(info.id);
    await store.addServerRows(info.id, range(21, 33).map(staged));
    expect(rowsOf(await store.readStaged(info.id, 0, 40))).toEqual(range(1, 33));
    await fixture.connect().beginServerRows(info.id);
    await store.addServerRows(info.id, [40].map(staged));
    expect(rowsOf(await store.readStaged(info.id, 0, 40))).toEqual([...range(1, 20), 40]);
  });

  it('a copy of staged records (apply of a dry run) keeps their packs', async () => {
    const dry = await store.create({ options: { ...OPTIONS, batchSize: 2, dryRun: true } });
    await store.stage(dry.id, range(1, 5).map(staged));
    const apply = await store.create({ options: { ...OPTIONS, batchSize: 50 } });
    expect(await store.copyStaged(dry.id, apply.id)).toBe(5);
    expect(rowsOf(await store.readStaged(apply.id, 1, 3))).toEqual([2, 3, 4]);
  });

  it('reads and extends an import staged before packs, a record per element', async () => {
    const info = await store.create({ options: OPTIONS });
    const keys = store.keys(info.id);
    await redis.hdel(keys.meta, 'stagedPack', 'staged');
    await redis.rpush(keys.staged, ...[1, 2, 3].map((row) => encodeStaged(staged(row))));
    const fresh = fixture.connect();
    expect(await fresh.stagedCount(info.id)).toBe(3);
    await fresh.stage(info.id, [4, 5].map(staged));
    expect(await redis.llen(keys.staged)).toBe(5);
    expect(rowsOf(await fresh.readStaged(info.id, 1, 3))).toEqual([2, 3, 4]);
  });

  it('counts none once the staged records are dropped', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.stage(info.id, range(1, 3).map(staged));
    await store.dropStaged(info.id);
    expect(await store.stagedCount(info.id)).toBe(0);
  });
});
