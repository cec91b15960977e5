import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline({
    sandbox: { faults: { maxRecords: 30 } },
    workerOptions: { concurrency: 1 },
  });
});
afterAll(async () => {
  await pipeline?.close();
});

describe('a batch larger than the server accepts (413)', () => {
  it('is split, and the working batch size of the import is lowered', async () => {
    const rows = Array.from({ length: 1_000 }, (_, index) => [`big.${index + 1}`]);
    const { info } = await pipeline.run(csv(['username'], rows), {
      resource: 'users',
      mode: 'create',
      batchSize: 100,
    });
    expect(info.counts).toEqual({
      succeeded: 1_000,
      failed: 0,
      skipped: 0,
      unprocessed: 0,
      planned: 0,
    });
    expect(pipeline.sandbox.store.users()).toHaveLength(1_000);
    const learned = await pipeline.context.runtime.batchSize(info.id);
    expect(learned).toBeLessThanOrEqual(30);
    // only the first batch met 413s: later ones were sent at the learned size
    const refusals = pipeline.sandbox.store.stats.faults.tooManyRecords;
    expect(refusals).toBeGreaterThan(0);
    expect(refusals).toBeLessThanOrEqual(3);
    const calls = await pipeline.context.runtime.calls(info.id);
    expect(calls.writeCalls).toBeGreaterThanOrEqual(1_000 / 30);
  });
});
