/**
 * A streamed import (`stream`): its batches go while its upload is still read; an upload that
 * breaks off leaves the batches queued before the break sent and reports every other row; a
 * cancel stops it; look-alikes of server keys are refused as without streaming; a sync refuses it.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelImport, startImport } from '../../src/app/imports.js';
import { submitImport } from '../../src/imports/submit-import.js';
import type { ImportInfo, ImportOptions } from '../../src/model/import.js';
import type { BatchRef } from '../../src/execute/run-batch.js';
import { parseImportFields } from '../../src/http/import-request.js';
import {
  importBatchRefs,
  streamBatchRefs,
  streamBoundary,
  streamJobCount,
  streamJobs,
} from '../../src/queue/import-queue.js';
import { snapshotKeys } from '../../src/snapshot/snapshot-keys.js';
import { waitFor } from '../helpers/redis.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline();
  const client = pipeline.context.createAdminClient();
  await client.postUsers([{ username: 'stream.alice' }]);
  await client.close();
});
afterAll(async () => {
  await pipeline?.close();
});

const OPTIONS: ImportOptions = {
  resource: 'users',
  mode: 'create',
  batchSize: 100,
  listSeparator: '|',
  emptyAsClear: false,
  allowAdmin: false,
  stream: true,
};

/** An upload the test feeds by hand, streamed; the import's id is known once it is created. */
function streamUpload(options: Partial<ImportOptions> = {}): {
  source: Readable;
  pending: Promise<ImportInfo>;
  importId: () => string;
} {
  let importId: string | undefined;
  const source = new Readable({ read() {} });
  const pending = startImport(
    pipeline.context,
    { options: { ...OPTIONS, ...options }, source, fileName: 'feed.csv' },
    (created) => {
      importId = created.id;
    },
  );
  // a rejection is asserted by the test that expects it
  pending.catch(() => {});
  return {
    source,
    pending,
    importId: () => {
      if (importId === undefined) throw new Error('the import is not created yet');
      return importId;
    },
  };
}

const pushRows = (source: Readable, prefix: string, from: number, to: number): void => {
  for (let row = from; row <= to; row++) source.push(`${prefix}${row}\n`);
};

const created = (prefix: string): number =>
  pipeline.sandbox.store.users().filter((user) => user.username?.startsWith(prefix)).length;

const waitCreated = (prefix: string, count: number): Promise<true> =>
  waitFor(() => (created(prefix) >= count ? true : undefined), {
    what: `${count} users ${prefix}* on the server`,
  });

describe('a streamed import', () => {
  it('sends its first batches while its upload is still read, and ends completed', async () => {
    const upload = streamUpload();
    upload.source.push('username\n');
    pushRows(upload.source, 'flow.user', 1, 250);
    // two whole batches go before the upload is whole; the third is not whole yet
    await waitCreated('flow.user', 200);
    const midway = await pipeline.context.store.get(upload.importId());
    expect(midway?.state).toBe('receiving');
    // its batches started: its rate counts from then
    expect((await pipeline.context.store.progress(upload.importId())).startedAt).toBeDefined();
    expect(created('flow.user')).toBe(200);
    pushRows(upload.source, 'flow.user', 251, 320);
    upload.source.push(null);
    const queued = await upload.pending;
    const info = await pipeline.waitFinal(queued.id);
    expect(info).toMatchObject({ state: 'completed', total: 320, batches: 4 });
    expect(info.counts.succeeded).toBe(320);
    expect(info.lookup).toMatchObject({ mode: 'snapshot', requested: 'auto' });
    expect(created('flow.user')).toBe(320);
    const results = await pipeline.results(queued.id);
    expect(results.map((result) => result.row)).toEqual(
      Array.from({ length: 320 }, (_, at) => at + 1),
    );
  });

  it('an upload that breaks off: the batches before the break are sent, every other row is reported', async () => {
    const upload = streamUpload();
    upload.source.push('username\n');
    pushRows(upload.source, 'broken.stream', 1, 250);
    await waitCreated('broken.stream', 200);
    upload.source.destroy(new Error('connection reset by peer'));
    await expect(upload.pending).rejects.toMatchObject({
      code: 'PORTER_UPLOAD_ABORTED',
      message: expect.stringContaining('200 records were queued to be sent before it'),
    });
    const info = await pipeline.waitFinal(upload.importId());
    expect(info).toMatchObject({ state: 'failed', total: 250 });
    expect(info.reason).toMatch(/the upload broke off after row 250: .*connection reset by peer/);
    expect(info.counts).toMatchObject({ succeeded: 200, unprocessed: 50, failed: 0 });
    const results = await pipeline.results(upload.importId());
    expect(results).toHaveLength(250);
    expect(results.slice(0, 200).every((result) => result.status === 'succeeded')).toBe(true);
    for (const result of results.slice(200)) {
      expect(result).toMatchObject({ status: 'unprocessed', errorCode: 'PORTER_UPLOAD_ABORTED' });
      expect(result.error).toMatch(/^not sent: the upload broke off after row 250/);
    }
    // nothing after the break was sent
    expect(created('broken.stream')).toBe(200);
    // settled when the upload ended: its copy of the directory goes then
    const snapshot = snapshotKeys(pipeline.context.store.prefix, upload.importId());
    expect(await pipeline.context.redis.exists(snapshot.records, snapshot.lookalikes)).toBe(0);
  });

  it('a syntax error stops the rest: the rows before it in whole batches are sent', async () => {
    const upload = streamUpload();
    upload.source.push('username,firstName\n');
    for (let row = 1; row <= 150; row++) upload.source.push(`syntax.user${row},First\n`);
    await waitCreated('syntax.user', 100);
    // an unclosed quote: the CSV cannot be read past it
    upload.source.push('syntax.user151,"never closed\n');
    upload.source.push(null);
    // the parser's refusal keeps its code, and says what was queued before it
    await expect(upload.pending).rejects.toMatchObject({
      code: 'PORTER_INPUT_UNREADABLE',
      message: expect.stringMatching(/Cannot read the CSV upload.*100 records were queued/),
    });
    const info = await pipeline.waitFinal(upload.importId());
    expect(info.state).toBe('failed');
    expect(info.reason).toMatch(/the upload broke off after row 150: Cannot read the CSV upload/);
    expect(info.counts).toMatchObject({ succeeded: 100, unprocessed: 50 });
    expect(info.done).toBe(info.total);
    expect(created('syntax.user')).toBe(100);
  });

  it('a cancel while the upload is read: batches queued stop, the rest is reported cancelled', async () => {
    const upload = streamUpload();
    upload.source.push('username\n');
    pushRows(upload.source, 'cancel.stream', 1, 150);
    await waitCreated('cancel.stream', 100);
    await cancelImport(pipeline.context, upload.importId(), 'wrong file');
    pushRows(upload.source, 'cancel.stream', 151, 400);
    upload.source.push(null);
    await expect(upload.pending).rejects.toMatchObject({ code: 'PORTER_CONFLICT' });
    const info = await pipeline.waitFinal(upload.importId());
    expect(info.state).toBe('cancelled');
    expect(info.done).toBe(info.total);
    expect(info.counts.succeeded).toBe(100);
    expect(info.counts.unprocessed).toBe(info.total - 100);
    const results = await pipeline.results(upload.importId());
    expect(
      results
        .filter((result) => result.status === 'unprocessed')
        .every((result) => result.errorCode === 'PORTER_CANCELLED'),
    ).toBe(true);
    expect(created('cancel.stream')).toBe(100);
  });

  /**
   * Submits 250 rows through a queue the test stands in for; they are read once the import is
   * prepared, so the producer, not the preparation, claims their jobs.
   */
  async function throughQueue(
    prefix: string,
    enqueueBatches: (refs: Iterable<BatchRef>) => Promise<unknown>,
    queueRetry?: { attempts: number; firstWaitMs: number },
  ): Promise<{ pending: Promise<ImportInfo>; importId: string }> {
    const { context } = pipeline;
    let importId: string | undefined;
    const source = new Readable({ read() {} });
    const pending = submitImport(
      { options: OPTIONS, source, fileName: 'feed.csv' },
      {
        store: context.store,
        keys: context.uploadKeys,
        enqueuePrepare: (id) => context.enqueuePrepare(id),
        enqueueBatches,
        queueRetry,
        onCreated: (info) => (importId = info.id),
      },
    );
    pending.catch(() => {});
    source.push('username\n');
    await waitFor(async () => {
      const info = importId === undefined ? undefined : await context.store.get(importId);
      return info?.lookup;
    });
    pushRows(source, prefix, 1, 250);
    source.push(null);
    return { pending, importId: importId! };
  }

  it('a claim whose jobs the queue refused is added when the upload ends: every row ends', async () => {
    let refused = 0;
    const { pending, importId } = await throughQueue('refused.queue', async (refs) => {
      if (refused++ === 0) throw new Error('the queue is away');
      return pipeline.context.enqueueBatches(refs);
    });
    await expect(pending).rejects.toMatchObject({
      code: 'PORTER_UPLOAD_ABORTED',
      message: expect.stringContaining('the queue is away'),
    });
    const info = await pipeline.waitFinal(importId);
    expect(info.state).toBe('failed');
    expect(info.done).toBe(info.total);
    // the refused claim's rows were sent once added; none twice
    expect(info.counts.succeeded).toBeGreaterThanOrEqual(100);
    expect(created('refused.queue')).toBe(info.counts.succeeded);
  });

  it('a queue that stays away: the rows of the jobs it never took are reported, none sent', async () => {
    const { pending, importId } = await throughQueue(
      'away.queue',
      () => Promise.reject(new Error('the queue is away')),
      { attempts: 2, firstWaitMs: 1 },
    );
    await expect(pending).rejects.toMatchObject({ code: 'PORTER_UPLOAD_ABORTED' });
    const info = await pipeline.waitFinal(importId);
    expect(info).toMatchObject({ state: 'failed', total: 250, done: 250 });
    expect(info.counts.unprocessed).toBe(250);
    const results = await pipeline.results(importId);
    expect(results.some((r) => /the queue did not take its batch/.test(r.error ?? ''))).toBe(true);
    expect(created('away.queue')).toBe(0);
  });

  it('a cancel once every row is staged, then the upload ends whole: every row ends', async () => {
    const upload = streamUpload();
    // in one piece: its 150 rows are staged at once, and one job's worth is claimed
    const rows = Array.from({ length: 150 }, (_, at) => `whole.cancel${at + 1}\n`).join('');
    upload.source.push(`username\n${rows}`);
    await waitCreated('whole.cancel', 100);
    await waitFor(async () =>
      (await pipeline.context.store.stagedCount(upload.importId())) === 150 ? true : undefined,
    );
    await cancelImport(pipeline.context, upload.importId(), 'wrong file');
    upload.source.push(null);
    await upload.pending;
    const info = await pipeline.waitFinal(upload.importId());
    expect(info).toMatchObject({ state: 'cancelled', total: 150, done: 150 });
    expect(info.counts).toMatchObject({ succeeded: 100, unprocessed: 50 });
    expect(created('whole.cancel')).toBe(100);
  });

  it('rows refused at upload past --max-failures N stop it before anything is sent', async () => {
    const upload = streamUpload({ maxFailures: '0' });
    upload.source.push('username,email\n');
    upload.source.push('limit.user0,not-an-email\n');
    for (let row = 1; row <= 250; row++) upload.source.push(`limit.user${row},\n`);
    upload.source.push(null);
    await expect(upload.pending).rejects.toMatchObject({ code: 'PORTER_CONFLICT' });
    const info = await pipeline.waitFinal(upload.importId());
    expect(info).toMatchObject({ state: 'failed', total: 251, done: 251 });
    expect(info.reason).toMatch(/1 records failed, more than --max-failures 0/);
    expect(info.counts).toMatchObject({ failed: 1, unprocessed: 250, succeeded: 0 });
    const results = await pipeline.results(upload.importId());
    expect(results.slice(1).every((r) => r.errorCode === 'PORTER_FAILURE_LIMIT')).toBe(true);
    expect(created('limit.user')).toBe(0);
  });

  it('a percentage of failures is checked once the upload is whole: the rows not queued are not sent', async () => {
    const upload = streamUpload({ maxFailures: '10%' });
    upload.source.push('username,email\n');
    for (let row = 1; row <= 100; row++) upload.source.push(`share.user${row},\n`);
    await waitCreated('share.user', 100);
    for (let row = 101; row <= 150; row++) upload.source.push(`share.user${row},not-an-email\n`);
    for (let row = 151; row <= 180; row++) upload.source.push(`share.user${row},\n`);
    upload.source.push(null);
    const queued = await upload.pending;
    const info = await pipeline.waitFinal(queued.id);
    expect(info).toMatchObject({ state: 'failed', total: 180 });
    expect(info.reason).toMatch(/50 records failed, more than --max-failures 10%/);
    expect(info.counts).toMatchObject({ succeeded: 100, failed: 50, unprocessed: 30 });
    const results = await pipeline.results(queued.id);
    expect(results.slice(150).every((r) => r.errorCode === 'PORTER_FAILURE_LIMIT')).toBe(true);
    expect(created('share.user')).toBe(100);
  });

  it.each(['auto', 'each'] as const)(
    'lookup %s: a key that looks like a server key is refused, the others created',
    async (lookup) => {
      const { info, results } = await pipeline.run(
        csv(['username'], [[`Stream.Alice`], [`lookalike.${lookup}`]]),
        { ...OPTIONS, lookup },
      );
      expect(info.lookup?.mode).toBe(lookup === 'each' ? 'each' : 'snapshot');
      expect(results[0]).toMatchObject({
        status: 'failed',
        errorCode: 'PORTER_KEY_LOOKALIKE',
      });
      expect(results[0]!.error).toContain('looks like stream.alice');
      expect(results[1]).toMatchObject({ status: 'succeeded', action: 'create' });
      expect(pipeline.sandbox.store.userByName('Stream.Alice')).toBeUndefined();
    },
  );

  it('repeats and look-alikes within the upload are refused across its batches', async () => {
    const rows = Array.from({ length: 150 }, (_, at) => [`repeat.stream${at + 1}`]);
    rows.push(['repeat.stream7'], ['REPEAT.stream8']);
    const { info, results } = await pipeline.run(csv(['username'], rows), OPTIONS);
    expect(info.counts).toMatchObject({ succeeded: 150, failed: 2 });
    expect(results[150]).toMatchObject({ errorCode: 'PORTER_ROW_INVALID' });
    expect(results[151]).toMatchObject({ errorCode: 'PORTER_KEY_LOOKALIKE' });
  });

  it('a sync refuses stream, before anything is stored', async () => {
    const before = (await pipeline.context.store.list({ limit: 1000 })).length;
    await expect(
      pipeline.submit(csv(['username'], [['sync.stream']]), {
        ...OPTIONS,
        mode: 'sync',
        sync: { missing: 'ignore' },
      }),
    ).rejects.toMatchObject({ code: 'PORTER_USAGE', message: expect.stringMatching(/^stream:/) });
    expect((await pipeline.context.store.list({ limit: 1000 })).length).toBe(before);
    expect(() =>
      parseImportFields({ resource: 'users', mode: 'sync', stream: 'true' }),
    ).toThrowError(/stream: a sync cannot stream/);
    expect(
      parseImportFields({ resource: 'users', mode: 'create', stream: 'yes' }).options,
    ).toMatchObject({ stream: true });
  });
});

describe('a streamed import paused while its upload is read', () => {
  it('keeps receiving records, and a resume brings it back to receiving', async () => {
    const { store } = pipeline.context;
    const info = await store.create({ options: OPTIONS });
    expect(await store.pause(info.id, 'the server failed')).toBe(true);
    await store.stage(info.id, [{ row: 1, input: { username: 'p1' }, record: { username: 'p1' } }]);
    expect(await store.stagedCount(info.id)).toBe(1);
    expect(await store.resume(info.id)).toBe(true);
    expect(await store.getState(info.id)).toBe('receiving');
    // an import that does not stream is not paused while it is received
    const plain = await store.create({ options: { ...OPTIONS, stream: undefined } });
    expect(await store.pause(plain.id, 'the server failed')).toBe(false);
    await store.cancel(info.id);
    await store.cancel(plain.id);
  });
});

describe('batch jobs of a streamed import', () => {
  it('are one call each, then four, on boundaries that do not depend on the total', () => {
    expect([...streamBatchRefs('s', 200, 450, 100)]).toEqual([
      { importId: 's', batchIndex: 2, start: 200, count: 100 },
      { importId: 's', batchIndex: 3, start: 300, count: 100 },
      { importId: 's', batchIndex: 4, start: 400, count: 50 },
    ]);
    // the 200 first jobs one call each, the next ones four
    const refs = [...importBatchRefs('s', 90_000, { batchSize: 100, stream: true })];
    expect(refs).toHaveLength(200 + 175);
    expect(refs[200]).toEqual({ importId: 's', batchIndex: 200, start: 20_000, count: 400 });
    expect(refs.at(-1)).toEqual({ importId: 's', batchIndex: 374, start: 89_600, count: 400 });
    expect(streamJobCount(90_000, 100)).toBe(375);
    expect(streamBoundary(20_399, 100)).toBe(20_000);
    expect(streamBoundary(20_400, 100)).toBe(20_400);
    // without streaming, a large import's jobs carry several calls from the first
    expect([...importBatchRefs('s', 90_000, { batchSize: 100 })]).toHaveLength(225);
  });

  it('are claimed in Redis on the same boundaries, once each, and only once prepared', async () => {
    const { store } = pipeline.context;
    const info = await store.create({ options: { ...OPTIONS, batchSize: 1 } });
    const stage = (from: number, to: number) =>
      store.stage(
        info.id,
        Array.from({ length: to - from }, (_, at) => {
          const username = `claim${from + at + 1}`;
          return { row: from + at + 1, input: { username }, record: { username } };
        }),
      );
    await stage(0, 150);
    const jobs = streamJobs(1);
    // not prepared yet: nothing
    expect(await store.claimStream(info.id, jobs)).toEqual({ from: 0, to: 0 });
    await store.setLookup(info.id, { mode: 'each', requested: 'each', why: 'asked for' });
    expect(await store.claimStream(info.id, jobs)).toEqual({ from: 0, to: 150 });
    expect(await store.claimStream(info.id, jobs)).toEqual({ from: 150, to: 150 });
    await stage(150, 207);
    expect(await store.claimStream(info.id, jobs)).toEqual({
      from: 150,
      to: streamBoundary(207, 1),
    });
    expect(streamBoundary(207, 1)).toBe(204);
    // once broken off, nothing more is claimed
    expect(await store.markBroken(info.id, 'test')).toBe(204);
    await stage(207, 212).catch(() => undefined);
    expect(await store.claimStream(info.id, jobs)).toEqual({ from: 204, to: 204 });
    await store.cancel(info.id);
  });
});

describe('a streamed import whose target refuses porter', () => {
  let refused: Pipeline;
  beforeAll(async () => {
    refused = await startPipeline({
      sandbox: { apiKey: 'right' },
      env: { ADMIN_API_KEY: 'wrong', PORTER_JOB_ATTEMPTS: '1' },
    });
  });
  afterAll(async () => {
    await refused?.close();
  });

  it('ends failed with nothing sent, and every row read has its result', async () => {
    let importId: string | undefined;
    const source = new Readable({ read() {} });
    const pending = startImport(
      refused.context,
      { options: OPTIONS, source, fileName: 'feed.csv' },
      (info) => (importId = info.id),
    );
    pending.catch(() => {});
    source.push('username\n');
    pushRows(source, 'refused.user', 1, 50);
    // its preparation is given up: the import ends while its upload is read
    await waitFor(async () => {
      const info = importId === undefined ? undefined : await refused.context.store.get(importId);
      return info?.state === 'failed' ? true : undefined;
    });
    pushRows(source, 'refused.user', 51, 150);
    source.push(null);
    await pending.catch(() => undefined);
    const info = await refused.waitFinal(importId!);
    expect(info).toMatchObject({ state: 'failed', total: 150, done: 150 });
    expect(info.counts.unprocessed).toBe(150);
    expect(refused.sandbox.store.users().some((u) => u.username?.startsWith('refused.'))).toBe(
      false,
    );
  });
});
