import type { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { createImportWorker } from '../../src/queue/import-worker.js';
import { silentLogger } from '../../src/util/logger.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';

let pipeline: Pipeline;
let worker: Worker;
let client: AdminClient;

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  const { context } = pipeline;
  // a fault outside the admin server: every request the batch makes throws a plain error
  client = new AdminClient({
    baseUrl: pipeline.sandbox.url,
    beforeRequest: async () => {
      throw new Error('the network stack is broken');
    },
  });
  worker = createImportWorker({
    connection: context.bullConnection,
    prefix: context.env.PORTER_PREFIX,
    queue: context.importQueue,
    logger: silentLogger,
    prepare: { redis: context.redis, store: context.store },
    deps: {
      store: context.store,
      journal: context.journal,
      runtime: context.runtime,
      health: context.health,
      breaker: context.breaker,
      retry: context.retryPolicy,
      bindTarget: () => ({ client }),
    },
  });
});
afterAll(async () => {
  await worker?.close();
  await client?.close();
  await pipeline?.close();
});

describe('a batch job that fails for good', () => {
  it('never leaves the import stuck: its records are reported unprocessed and the import settles', async () => {
    const rows = Array.from({ length: 30 }, (_, index) => [`abandoned.${index + 1}`]);
    const submitted = await pipeline.submit(csv(['username'], rows), {
      resource: 'users',
      mode: 'upsert',
      // no bulk read of every key first: the batch itself meets the broken network
      allowLookalike: true,
      batchSize: 10,
    });
    // the rows are recorded before the last attempt's job is failed: once all three jobs are
    // failed the import has settled, even if the worker stopped right then
    await waitFor(async () =>
      (await pipeline.context.importQueue.getJobCounts('failed')).failed === 3 ? true : undefined,
    );
    expect((await pipeline.context.store.get(submitted.id))?.settled).toBe(true);
    const info = await pipeline.waitFinal(submitted.id);
    expect(info.state).toBe('completed_with_errors');
    expect(info.counts).toEqual({
      succeeded: 0,
      failed: 0,
      skipped: 0,
      unprocessed: 30,
      planned: 0,
    });
    const results = await pipeline.results(submitted.id);
    expect(results.every((result) => result.errorCode === 'PORTER_BATCH_ABANDONED')).toBe(true);
    expect(results[0]!.error).toMatch(/not sent: the network stack is broken/);
  }, 60_000);
});
