import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';

let pipeline: Pipeline;
beforeAll(async () => {
  // every call waits 20 s in the sandbox: a batch in hand outlives the shutdown timeout
  pipeline = await startPipeline({ workers: false, sandbox: { faults: { latencyMs: 20_000 } } });
});
afterAll(async () => {
  pipeline.sandbox.setFaults({ latencyMs: 0 });
  await pipeline?.close();
});

describe('the shutdown timeout', () => {
  it('bounds how long a worker waits for the batches in hand; they go back to the queue', async () => {
    const submitted = await pipeline.submit(csv(['username'], [['slow.one'], ['slow.two']]), {
      resource: 'users',
      mode: 'upsert',
    });
    // three shutdowns in a row cut the batch short (say, a rolling deploy against a slow server):
    // more than its job attempts, yet none is spent, and the batch is not given up
    for (let round = 1; round <= 3; round++) {
      const readsBefore = pipeline.sandbox.store.stats.requests.GET;
      const workers = pipeline.startWorkers({ shutdownTimeoutMs: 300 });
      await waitFor(() =>
        pipeline.sandbox.store.stats.requests.GET > readsBefore ? true : undefined,
      );
      const started = Date.now();
      await workers.close();
      expect(Date.now() - started).toBeLessThan(10_000);
      // no result was recorded for a batch cut short: another worker will run it
      expect((await pipeline.context.store.get(submitted.id))?.done).toBe(0);
      const [job] = await pipeline.context.importQueue.getJobs([
        'waiting',
        'delayed',
        'prioritized',
      ]);
      expect(job?.attemptsMade).toBe(0);
    }
    pipeline.sandbox.setFaults({ latencyMs: 0 });
    pipeline.startWorkers();
    const info = await pipeline.waitFinal(submitted.id);
    expect(info.counts).toEqual({
      succeeded: 2,
      failed: 0,
      skipped: 0,
      unprocessed: 0,
      planned: 0,
    });
  });
});
