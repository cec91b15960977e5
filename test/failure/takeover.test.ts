/**
 * A worker killed in the middle of an import: another worker takes its batches over once their
 * locks lapse (default lock duration), says so with the import and batch, and nothing is created
 * twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';

let pipeline: Pipeline;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false, sandbox: { faults: { latencyMs: 40 } } });
});
afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await pipeline?.close();
});

describe('a lost worker', () => {
  it('has its batches taken over by another, which says so; every user created once', async () => {
    const total = 1_500;
    const rows = Array.from({ length: total }, (_, index) => [`takeover.${index}`, `T${index}`]);
    const lost = spawnWorker(pipeline.childEnv(), ['--concurrency', '4']);
    const taker = spawnWorker(pipeline.childEnv(), ['--concurrency', '4']);
    workers.push(lost, taker);
    // both take batches from the start: the lost one has some running when it is killed (on a
    // busy machine it could else still be starting when the taker has done a fifth)
    await waitFor(
      async () => ((await pipeline.context.importQueue.getWorkersCount()) >= 2 ? true : undefined),
      { timeoutMs: 60_000, what: 'both workers to listen' },
    );
    const submitted = await pipeline.submit(csv(['username', 'lastName'], rows), {
      resource: 'users',
      mode: 'create',
      batchSize: 50,
    });
    await waitFor(
      async () => {
        const info = await pipeline.context.store.get(submitted.id);
        return (info?.done ?? 0) >= total * 0.2 ? true : undefined;
      },
      { timeoutMs: 60_000, what: 'a fifth of the import' },
    );
    lost.child.kill('SIGKILL');
    const info = await pipeline.waitFinal(submitted.id, 120_000);
    expect(info.counts).toMatchObject({ succeeded: total, failed: 0, unprocessed: 0 });
    expect(pipeline.sandbox.store.stats.applied.users.created).toBe(total);
    const takeovers = taker
      .output()
      .split('\n')
      .filter((line) => line.includes('taking over a batch'));
    expect(takeovers.length).toBeGreaterThan(0);
    expect(takeovers[0]).toContain(submitted.id);
    expect(takeovers[0]).toMatch(/"batchIndex":\d+/);
    taker.child.kill('SIGTERM');
    expect(await taker.exited).toBe(0);
  }, 180_000);
});
