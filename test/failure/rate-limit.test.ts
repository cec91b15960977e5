import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPorterContext, type PorterContext } from '../../src/app/context.js';
import { startWorkers, type RunningWorkers } from '../../src/app/workers.js';
import { silentLogger } from '../../src/util/logger.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let second: PorterContext;
let secondWorkers: RunningWorkers;

beforeAll(async () => {
  // two worker "processes": each its own context, gate and Redis connections, one prefix
  pipeline = await startPipeline({
    sandbox: { faults: { rateLimit: 100 } },
    env: { PORTER_MAX_ATTEMPTS: '20', PORTER_RETRY_MAX_MS: '2000' },
  });
  second = await createPorterContext(pipeline.context.env, { logger: silentLogger });
  secondWorkers = startWorkers(second, { concurrency: 4 });
});
afterAll(async () => {
  await secondWorkers?.close();
  await second?.close();
  await pipeline?.close();
});

describe('429 with Retry-After', () => {
  it('every worker backs off together, and the import completes with exact counts', async () => {
    const rows = Array.from({ length: 600 }, (_, index) => [`limited.${index + 1}`]);
    // one read per record: enough requests to pass the rate limit from both workers
    const { info } = await pipeline.run(csv(['username'], rows), {
      resource: 'users',
      mode: 'create',
      batchSize: 20,
      lookup: 'each',
    });
    expect(info.counts).toEqual({
      succeeded: 600,
      failed: 0,
      skipped: 0,
      unprocessed: 0,
      planned: 0,
    });
    expect(pipeline.sandbox.store.stats.faults.rateLimited).toBeGreaterThan(0);
    const first = pipeline.context.gateOf(pipeline.context.targets.require('default')).stats
      .backoffWaits;
    const other = second.gateOf(second.targets.require('default')).stats.backoffWaits;
    console.log(
      `429 answers: ${pipeline.sandbox.store.stats.faults.rateLimited}; back-off waits: worker A ${first}, worker B ${other}`,
    );
    expect(first).toBeGreaterThan(0);
    expect(other).toBeGreaterThan(0);
    expect(pipeline.sandbox.store.users()).toHaveLength(600);
  });
});

describe('--max-rps', () => {
  it('caps requests per second across all workers', async () => {
    const capped = await startPipeline({ env: { PORTER_MAX_RPS: '10' } });
    try {
      const rows = Array.from({ length: 60 }, (_, index) => [`capped.${index + 1}`]);
      const { info } = await capped.run(csv(['username'], rows), {
        resource: 'users',
        mode: 'create',
        batchSize: 2,
      });
      expect(info.counts.succeeded).toBe(60);
      // 30 calls at 10 per second: the gate made requests wait for the next second
      expect(
        capped.context.gateOf(capped.context.targets.require('default')).stats.capWaits,
      ).toBeGreaterThan(0);
    } finally {
      await capped.close();
    }
  });
});
