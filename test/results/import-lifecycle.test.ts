import { afterAll, describe, expect, it } from 'vitest';
import { isPorterError } from '../../src/errors/porter-error.js';
import type { ImportState, RecordResult } from '../../src/model/import.js';
import {
  parseImportEvent,
  waitForImport,
  type ImportEvent,
} from '../../src/results/import-events.js';
import { importEventsChannel } from '../../src/results/import-keys.js';
import { waitFor } from '../helpers/redis.js';
import { OPTIONS, range, result, results, staged, storeFixture } from './store-fixture.js';

const fixture = storeFixture('import-lifecycle');
const { store, redis } = fixture;

afterAll(() => fixture.close());

/** A queued import with `total` staged records. */
async function queuedImport(total: number): Promise<string> {
  const info = await store.create({ options: OPTIONS });
  await store.stage(info.id, range(1, total).map(staged));
  await store.markReceived(info.id, { total, batches: 1 });
  return info.id;
}

function unprocessed(row: number): RecordResult {
  return { ...result(row, 'unprocessed'), errorCode: 'PORTER_CANCELLED', error: 'cancelled' };
}

describe('recordResults', () => {
  it('counts a batch that runs twice once', async () => {
    const id = await queuedImport(10);
    const batch = [...results(range(1, 3)), result(4, 'failed'), result(5, 'skipped')];
    const first = await store.recordResults(id, batch);
    expect(first.written).toBe(5);
    const again = await store.recordResults(
      id,
      batch.map((item) => ({ ...item, attempts: 9 })),
    );
    expect(again.written).toBe(0);
    expect(again.info.counts).toEqual({
      succeeded: 3,
      failed: 1,
      skipped: 1,
      unprocessed: 0,
      planned: 0,
    });
    expect(again.info.done).toBe(5);
    expect(again.info.state).toBe('queued');
    // the first result of a row wins
    const [row1] = await collect(store.results(id));
    expect(row1.attempts).toBe(1);
  });

  it('writes and counts only the new rows of a call that overlaps an earlier one', async () => {
    const id = await queuedImport(10);
    await store.recordResults(id, [result(1), result(2, 'failed'), result(3)]);
    const later = [result(2), result(3, 'failed'), result(4, 'failed'), result(5)];
    const { written, info } = await store.recordResults(
      id,
      later.map((item) => ({ ...item, attempts: 7 })),
    );
    expect(written).toBe(2);
    expect(info.done).toBe(5);
    expect(info.counts).toMatchObject({ succeeded: 3, failed: 2 });
    const byRow = new Map((await collect(store.results(id))).map((item) => [item.row, item]));
    expect([...byRow.keys()]).toEqual([1, 2, 3, 4, 5]);
    expect(byRow.get(2)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(byRow.get(4)).toMatchObject({ status: 'failed', attempts: 7 });
    expect(await store.missingRows(id, range(1, 7))).toEqual([6, 7]);
  });

  it('claims rows far apart in parts, and tells which of them have no result', async () => {
    const id = await queuedImport(3_000_000);
    const far = [2_999_999, 7, 1_500_000, 8, 9];
    const { written } = await store.recordResults(id, results(far));
    expect(written).toBe(5);
    const asked = [1, 7, 10, 1_499_999, 1_500_000, 2_999_999, 3_000_000];
    expect(await store.missingRows(id, asked)).toEqual([1, 10, 1_499_999, 3_000_000]);
    // only the bytes of the bitmap the rows fall in were written, each bit once
    expect(await redis.bitcount(store.keys(id).done)).toBe(5);
  });

  it('counts rows once when two workers write them at the same moment', async () => {
    const id = await queuedImport(3000);
    const other = fixture.connect();
    const rows = range(1, 3000);
    const [mine, theirs] = await Promise.all([
      store.recordResults(id, results(rows)),
      other.recordResults(id, results([...rows].reverse())),
    ]);
    expect(mine.written + theirs.written).toBe(3000);
    const info = await store.get(id);
    expect(info).toMatchObject({ done: 3000, total: 3000, state: 'completed' });
    expect(info?.counts.succeeded).toBe(3000);
  });

  it('counts duplicate rows within one call once', async () => {
    const id = await queuedImport(5);
    const { written, info } = await store.recordResults(id, results([1, 1, 2]));
    expect(written).toBe(2);
    expect(info.done).toBe(2);
  });

  it('finishes completed when every result succeeded or was skipped', async () => {
    const id = await queuedImport(4);
    expect(await store.transition(id, ['queued'], 'running')).toBe(true);
    await store.recordResults(id, results([1, 2]));
    const { info } = await store.recordResults(id, [...results([3]), result(4, 'skipped')]);
    expect(info.state).toBe('completed');
    expect(info.finishedAt).toBeDefined();
    expect(await store.stagedCount(id)).toBe(0);
  });

  it('finishes completed_with_errors when any result failed or was unprocessed', async () => {
    const id = await queuedImport(3);
    await store.recordResults(id, [result(1), result(2, 'failed')]);
    const { info } = await store.recordResults(id, [unprocessed(3)]);
    expect(info.state).toBe('completed_with_errors');
  });

  it('finishes a paused import whose last result arrives', async () => {
    const id = await queuedImport(2);
    await store.transition(id, ['queued'], 'running');
    await store.recordResults(id, results([1]));
    expect(await store.pause(id, 'admin server maintenance')).toBe(true);
    expect((await store.get(id))?.reason).toBe('admin server maintenance');
    const { info } = await store.recordResults(id, results([2]));
    expect(info.state).toBe('completed');
    expect(info.reason).toBeUndefined();
  });

  it('refuses bad results and unknown imports', async () => {
    const id = await queuedImport(1);
    const bad = { ...result(1), status: 'done' } as unknown as RecordResult;
    await expect(store.recordResults(id, [bad])).rejects.toThrow(/unknown result status/);
    await expect(store.recordResults(id, [result(0)])).rejects.toThrow(/positive integer/);
    const error = await store.recordResults('imp_gone', results([1])).catch((e) => e);
    expect(isPorterError(error) && error.code).toBe('PORTER_NOT_FOUND');
  });

  it('tells which rows have no result yet', async () => {
    const id = await queuedImport(6);
    await store.recordResults(id, results([2, 4]));
    expect(await store.missingRows(id, [1, 2, 3, 4, 5])).toEqual([1, 3, 5]);
  });
});

describe('markReceived', () => {
  it('finishes at once an import whose records were all invalid', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.recordResults(info.id, results([1, 2, 3], 'failed'));
    const received = await store.markReceived(info.id, { total: 3, batches: 0 });
    expect(received.state).toBe('completed_with_errors');
    expect(received).toMatchObject({ total: 3, done: 3, batches: 0 });
  });

  it('records when the upload was received, once', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.stage(info.id, [staged(1)]);
    expect((await store.get(info.id))?.receivedAt).toBeUndefined();
    const received = await store.markReceived(info.id, { total: 1, batches: 1 });
    expect(Date.parse(received.receivedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(info.createdAt),
    );
    const again = await store.markReceived(info.id, { total: 1, batches: 1 });
    expect(again.receivedAt).toBe(received.receivedAt);
  });

  it('may be called again with the same total, not with another', async () => {
    const id = await queuedImport(2);
    expect((await store.markReceived(id, { total: 2, batches: 1 })).state).toBe('queued');
    const error = await store.markReceived(id, { total: 3, batches: 1 }).catch((e) => e);
    expect(isPorterError(error) && error.code).toBe('PORTER_CONFLICT');
  });
});

describe('cancel', () => {
  it('cancels at once, still records the remaining rows, and stays cancelled', async () => {
    const id = await queuedImport(4);
    await store.recordResults(id, results([1]));
    const cancelled = await store.cancel(id, 'wrong file');
    expect(cancelled).toMatchObject({ state: 'cancelled', reason: 'wrong file' });
    expect(cancelled.finishedAt).toBeDefined();
    expect(await store.isCancelled(id)).toBe(true);
    expect((await store.progress(id)).settled).toBe(false);
    // staged records stay until every row has its result
    expect(await store.stagedCount(id)).toBe(4);

    const { written, info } = await store.recordResults(id, [unprocessed(2), unprocessed(3)]);
    expect(written).toBe(2);
    expect(info.state).toBe('cancelled');
    expect(await store.recordUnprocessed(id, { errorCode: 'PORTER_CANCELLED', error: 'x' })).toBe(
      1,
    );
    const progress = await store.progress(id);
    expect(progress).toMatchObject({ state: 'cancelled', settled: true, done: 4, total: 4 });
    expect(progress.counts).toEqual({
      succeeded: 1,
      failed: 0,
      skipped: 0,
      unprocessed: 3,
      planned: 0,
    });
    expect(await store.stagedCount(id)).toBe(0);
    expect((await store.cancel(id, 'again')).reason).toBe('wrong file');
  });

  it('lets an import cancelled while receiving learn its total and settle', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.stage(info.id, [staged(1), staged(2)]);
    await store.cancel(info.id);
    expect(await store.stagedCount(info.id)).toBe(2);
    const received = await store.markReceived(info.id, { total: 2, batches: 1 });
    expect(received).toMatchObject({ state: 'cancelled', total: 2 });
    await store.recordUnprocessed(info.id, { errorCode: 'PORTER_CANCELLED', error: 'cancelled' });
    expect((await store.progress(info.id)).settled).toBe(true);
  });

  it('publishes final and settled events', async () => {
    const subscriber = redis.duplicate();
    const events: ImportEvent[] = [];
    subscriber.on('message', (_channel: string, message: string) => {
      const event = parseImportEvent(message);
      if (event) events.push(event);
    });
    await subscriber.subscribe(importEventsChannel(store.prefix));
    const id = await queuedImport(1);
    await store.cancel(id);
    const waiter = redis.duplicate();
    const waiting = waitForImport(store, waiter, id, { timeoutMs: 10_000 });
    await store.recordResults(id, [unprocessed(1)]);
    expect((await waiting).settled).toBe(true);
    const done = await queuedImport(1);
    await store.recordResults(done, results([1]));
    const final = await waitForImport(store, waiter, done, { timeoutMs: 10_000 });
    expect(final.state).toBe('completed');
    // pub/sub delivery is asynchronous: wait for the last message rather than sleeping
    await waitFor(() => (events.some((event) => event.id === done) ? true : undefined), {
      what: 'the completed event',
    });
    expect(events.filter((event) => event.id === id)).toEqual([
      { id, state: 'cancelled', settled: false },
      { id, state: 'cancelled', settled: true },
    ]);
    expect(events.filter((event) => event.id === done)).toEqual([
      { id: done, state: 'completed', settled: true },
    ]);
    subscriber.disconnect();
    waiter.disconnect();
  });
});

describe('transition', () => {
  it('moves only from the expected states and never leaves a final one', async () => {
    const id = await queuedImport(2);
    expect(await store.transition(id, ['running'], 'paused')).toBe(false);
    expect(await store.transition(id, ['queued'], 'running')).toBe(true);
    const running = await redis.hget(store.keys(id).meta, 'startedAt');
    expect(running).toBeTruthy();
    expect(await store.transition(id, ['running'], 'failed', 'too many failures')).toBe(true);
    const failed = await store.get(id);
    expect(failed).toMatchObject({ state: 'failed', reason: 'too many failures' });
    expect(failed?.finishedAt).toBeDefined();
    const all: ImportState[] = ['receiving', 'queued', 'running', 'paused', 'failed', 'completed'];
    expect(await store.transition(id, all, 'running')).toBe(false);
    expect(await store.transition(id, all, 'completed')).toBe(false);
    expect((await store.get(id))?.state).toBe('failed');
    const error = await store.transition('imp_gone', ['queued'], 'running').catch((e) => e);
    expect(isPorterError(error) && error.code).toBe('PORTER_NOT_FOUND');
  });

  it('pauses and resumes to running, or to queued when nothing had started', async () => {
    const id = await queuedImport(2);
    expect(await store.pause(id, 'wait')).toBe(true);
    expect(await store.resume(id)).toBe(true);
    expect(await store.getState(id)).toBe('queued');
    await store.transition(id, ['queued'], 'running');
    await store.pause(id, 'wait');
    expect(await store.resume(id)).toBe(true);
    expect(await store.get(id)).toMatchObject({ state: 'running' });
    expect((await store.get(id))?.reason).toBeUndefined();
    expect(await store.resume(id)).toBe(false);
  });

  it('refuses a pause decided before the import was last resumed, and takes one decided after', async () => {
    const id = await queuedImport(2);
    await store.transition(id, ['queued'], 'running');
    const decidedBefore = Date.now() - 1_000;
    expect(await store.pause(id, 'first')).toBe(true);
    expect(await store.resume(id)).toBe(true);
    // a batch's breaker read its failures before the resume: the resume stands
    expect(await store.pause(id, 'stale', decidedBefore)).toBe(false);
    expect(await store.getState(id)).toBe('running');
    // read after it, the same decision pauses
    expect(await store.pause(id, 'fresh', Date.now() + 1_000)).toBe(true);
    expect(await store.get(id)).toMatchObject({ state: 'paused', reason: 'fresh' });
  });

  it('settles at once an upload that failed while receiving', async () => {
    const info = await store.create({ options: OPTIONS });
    await store.stage(info.id, [staged(1)]);
    expect(await store.transition(info.id, ['receiving'], 'failed', 'broken CSV')).toBe(true);
    expect((await store.progress(info.id)).settled).toBe(true);
    expect(await store.stagedCount(info.id)).toBe(0);
  });
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
