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
    const workers = pipeline.startWorkers({ shutdownTimeoutMs: 300 });
    await waitFor(() => (pipeline.sandbox.store.stats.requests.GET > 0 ? true : undefined));
    const started = Date.now();
    await workers.close();
    expect(Date.now() - started).toBeLessThan(10_000);
    // no result was recorded for a batch cut short: another worker will run it
    expect((await pipeline.context.store.get(submitted.id))?.done).toBe(0);
  });
});
