/**
 * A worker holds more batches than it has calls in flight: --concurrency caps the calls the
 * admin server sees, while the extra batches read, plan and record in Redis meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchesInHand } from '../../src/app/workers.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { forward, startProxy, type TestProxy } from '../helpers/proxy.js';

/** Counts the writes in flight at once on their way to the sandbox. */
const counted = { inFlight: 0, mostInFlight: 0, writes: 0 };

let sandbox: RunningSandbox;
let proxy: TestProxy;
let pipeline: Pipeline;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, faults: { latencyMs: 20 } });
  const target = new URL(sandbox.url);
  proxy = await startProxy((incoming, outgoing) => {
    if (incoming.method === 'GET') return forward(target, incoming, outgoing);
    counted.writes++;
    counted.inFlight++;
    counted.mostInFlight = Math.max(counted.mostInFlight, counted.inFlight);
    forward(target, incoming, outgoing, () => counted.inFlight--);
  });
  pipeline = await startPipeline({
    env: { ADMIN_BASE_URL: proxy.url },
    workerOptions: { concurrency: 2 },
  });
});

afterAll(async () => {
  await pipeline.close();
  proxy.close();
  await sandbox.close();
});

describe('calls in flight and batches in hand', () => {
  it('holds half as many batches again as calls in flight', () => {
    expect([1, 2, 4, 8].map(batchesInHand)).toEqual([1, 3, 6, 12]);
  });

  it('never has more calls in flight than --concurrency, with more batches in hand', async () => {
    const lines = ['username,email'];
    for (let index = 1; index <= 1200; index++) lines.push(`flight${index},f${index}@example.com`);
    // the batches the worker holds, sampled while the import runs
    let mostActive = 0;
    let running = true;
    const sampling = (async () => {
      while (running) {
        const active = await pipeline.context.importQueue.getActiveCount();
        mostActive = Math.max(mostActive, active);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    })();
    const { info } = await pipeline.run(`${lines.join('\n')}\n`, {
      resource: 'users',
      mode: 'create',
      batchSize: 50,
    });
    running = false;
    await sampling;
    expect(info.state).toBe('completed');
    expect(info.counts.succeeded).toBe(1200);
    expect(counted.writes).toBe(24);
    // two calls at once were seen, and never a third, while three batches were in hand
    expect(counted.mostInFlight).toBe(2);
    expect(mostActive).toBe(3);
  });
});
