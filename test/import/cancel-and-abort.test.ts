import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelImport, startImport } from '../../src/app/imports.js';
import { waitFor } from '../helpers/redis.js';
import { PorterError } from '../../src/errors/porter-error.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
beforeAll(async () => {
  // no workers at first: batches wait in the queue until a test starts them
  pipeline = await startPipeline({ workers: false });
});
afterAll(async () => {
  await pipeline?.close();
});

/** Starts an import of a stream the test feeds by hand; its id is known once created. */
function startUpload(
  source: Readable,
  fileName: string,
): { pending: Promise<unknown>; importId: () => string | undefined } {
  let importId: string | undefined;
  const pending = startImport(
    pipeline.context,
    {
      options: {
        resource: 'users',
        mode: 'create',
        batchSize: 100,
        listSeparator: '|',
        emptyAsClear: false,
        allowAdmin: false,
      },
      source,
      fileName,
    },
    (created) => {
      importId = created.id;
    },
  );
  return { pending, importId: () => importId };
}

describe('cancel', () => {
  it('batches not yet sent are never sent; their records are reported unprocessed', async () => {
    const rows = Array.from({ length: 250 }, (_, index) => [`cancel.user${index + 1}`]);
    const submitted = await pipeline.submit(csv(['username'], rows), {
      resource: 'users',
      mode: 'create',
    });
    expect(submitted.state).toBe('queued');
    expect(submitted.batches).toBe(3);
    const writesBefore = pipeline.sandbox.store.stats.requests.POST;
    const cancelled = await cancelImport(pipeline.context, submitted.id, 'changed my mind');
    // waiting batches are removed and reported at once: no worker is needed for that
    expect(cancelled).toMatchObject({ state: 'cancelled', reason: 'changed my mind', done: 250 });
    expect(cancelled.counts).toEqual({
      succeeded: 0,
      failed: 0,
      skipped: 0,
      unprocessed: 250,
      planned: 0,
    });
    expect(await pipeline.context.importQueue.count()).toBe(0);
    const results = await pipeline.results(submitted.id);
    expect(
      results.every((r) => r.status === 'unprocessed' && r.errorCode === 'PORTER_CANCELLED'),
    ).toBe(true);
    expect(pipeline.sandbox.store.stats.requests.POST).toBe(writesBefore);
    await expect(cancelImport(pipeline.context, submitted.id)).rejects.toMatchObject({
      code: 'PORTER_CONFLICT',
    });
  });

  it('a batch already in a worker stops before its next call', async () => {
    const rows = Array.from({ length: 30 }, (_, index) => [`late.cancel${index + 1}`]);
    pipeline.sandbox.setFaults({ failRate: 1 }); // every call refused: the batch sits in its retry loop
    const workers = pipeline.startWorkers();
    const submitted = await pipeline.submit(csv(['username'], rows), {
      resource: 'users',
      mode: 'create',
    });
    await waitFor(() => (pipeline.sandbox.store.stats.faults.failed > 0 ? true : undefined));
    await cancelImport(pipeline.context, submitted.id);
    pipeline.sandbox.setFaults({ failRate: 0 });
    const done = await waitFor(async () => {
      const current = await pipeline.context.store.get(submitted.id);
      return current && current.done === 30 ? current : undefined;
    });
    expect(done.state).toBe('cancelled');
    expect(done.counts.unprocessed).toBe(30);
    expect(pipeline.sandbox.store.users().some((user) => user.username?.startsWith('late.'))).toBe(
      false,
    );
    await workers.close();
  });
});

describe('an upload that breaks midway', () => {
  it('sends nothing and ends failed with the reason', async () => {
    const postsBefore = pipeline.sandbox.store.stats.requests.POST;
    const source = new Readable({ read() {} });
    source.push('username,firstName\n');
    for (let row = 1; row <= 300; row++) source.push(`broken.user${row},First\n`);
    const upload = startUpload(source, 'broken.csv');
    const pending = upload.pending;
    setImmediate(() => source.destroy(new Error('connection reset by peer')));
    await expect(pending).rejects.toBeInstanceOf(PorterError);
    const info = await pipeline.context.store.get(upload.importId()!);
    expect(info?.state).toBe('failed');
    expect(info?.reason).toMatch(/connection reset by peer/);
    expect(await pipeline.context.importQueue.count()).toBe(0);
    expect(pipeline.sandbox.store.stats.requests.POST).toBe(postsBefore);
  });

  it('an empty file is a clear error', async () => {
    await expect(pipeline.submit('', { resource: 'users', mode: 'create' })).rejects.toMatchObject({
      code: 'PORTER_INPUT_EMPTY',
    });
  });

  it('an unknown column stops the import before anything is sent, naming the column', async () => {
    await expect(
      pipeline.submit(csv(['username', 'shoeSize'], [['x', '44']]), {
        resource: 'users',
        mode: 'create',
      }),
    ).rejects.toMatchObject({
      code: 'PORTER_INPUT_UNKNOWN_COLUMN',
      message: expect.stringMatching(/shoeSize/),
    });
  });
});

describe('cancelled while the upload is received', () => {
  it('the records read get a result, the import settles cancelled, nothing is sent', async () => {
    const source = new Readable({ read() {} });
    source.push('username\n');
    for (let row = 1; row <= 1_200; row++) source.push(`receiving.user${row}\n`);
    const upload = startUpload(source, 'slow.csv');
    const pending = upload.pending;
    const outcome = pending.catch((error: unknown) => error);
    await waitFor(async () => {
      const id = upload.importId();
      const info = id ? await pipeline.context.store.get(id) : undefined;
      return info && info.state === 'receiving' ? true : undefined;
    });
    await pipeline.context.store.cancel(upload.importId()!, 'stop that upload');
    for (let row = 1_201; row <= 1_600; row++) source.push(`receiving.user${row}\n`);
    source.push(null);
    expect(await outcome).toMatchObject({ code: 'PORTER_CONFLICT' });
    const info = await pipeline.waitFinal(upload.importId()!);
    expect(info.state).toBe('cancelled');
    expect(info.done).toBe(info.total);
    expect(info.counts.unprocessed).toBe(info.total);
    expect(await pipeline.context.importQueue.count()).toBe(0);
  });
});

describe('records given twice in one upload', () => {
  it('the second is refused naming the first row, even in another batch', async () => {
    const text = csv(['username'], [['twice.a'], ['twice.b'], ['twice.a']]);
    const submitted = await pipeline.submit(text, {
      resource: 'users',
      mode: 'upsert',
      batchSize: 2,
    });
    const results = await waitFor(async () => {
      const all = await pipeline.results(submitted.id);
      return all.some((result) => result.row === 3) ? all : undefined;
    });
    expect(results.find((result) => result.row === 3)).toMatchObject({
      status: 'failed',
      errorCode: 'PORTER_ROW_INVALID',
      field: 'username',
      error: expect.stringMatching(/duplicate of row 1/),
    });
    await cancelImport(pipeline.context, submitted.id);
  });
});

describe('--max-failures passed by rows refused while receiving', () => {
  it('sends nothing: the import ends failed and its valid records are unprocessed', async () => {
    const postsBefore = pipeline.sandbox.store.stats.requests.POST;
    const text = csv(
      ['username', 'city'],
      [
        ['', 'Oslo'],
        ['limit.a', ''],
        ['limit.b', ''],
      ],
    );
    const info = await pipeline.submit(text, {
      resource: 'users',
      mode: 'create',
      maxFailures: '0',
    });
    expect(info).toMatchObject({ state: 'failed', settled: true });
    expect(info.reason).toMatch(/more than --max-failures 0/);
    expect(info.counts).toEqual({
      succeeded: 0,
      failed: 1,
      skipped: 0,
      unprocessed: 2,
      planned: 0,
    });
    expect(await pipeline.context.importQueue.count()).toBe(0);
    expect(pipeline.sandbox.store.stats.requests.POST).toBe(postsBefore);
  });
});
