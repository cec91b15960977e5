import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { spawnWorker } from '../helpers/worker-process.js';

let pipeline: Pipeline;
// a pipeline per signal: the batches the first worker left queued must not feed the second
beforeEach(async () => {
  pipeline = await startPipeline({ workers: false, sandbox: { faults: { latencyMs: 1_500 } } });
});
afterEach(async () => {
  await pipeline?.close();
});

describe('a stop signal with a batch in hand', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: the worker takes no new batch, finishes the one in hand, records its results, and exits 0',
    async (signal) => {
      const rows = Array.from({ length: 30 }, (_, index) => [`graceful.${signal}.${index + 1}`]);
      const submitted = await pipeline.submit(csv(['username'], rows), {
        resource: 'users',
        mode: 'create',
        batchSize: 10,
      });
      const worker = spawnWorker(pipeline.childEnv(), ['--concurrency', '1']);
      // the first batch's POST has reached the sandbox and waits out its latency
      await waitFor(() => (pipeline.sandbox.store.stats.requests.POST > 0 ? true : undefined), {
        timeoutMs: 30_000,
        what: 'the first call',
      });
      worker.child.kill(signal);
      expect(await worker.exited).toBe(0);
      const info = await pipeline.context.store.get(submitted.id);
      expect(info?.done).toBe(10);
      expect(info?.counts.succeeded).toBe(10);
      expect(pipeline.sandbox.store.stats.requests.POST).toBe(1);
      expect(pipeline.sandbox.store.users()).toHaveLength(10);
    },
  );
});
