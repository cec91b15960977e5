import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';

let pipeline: Pipeline;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  // the workers are separate processes; a little latency keeps batches in flight when they die
  pipeline = await startPipeline({ workers: false, sandbox: { faults: { latencyMs: 15 } } });
});
afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await pipeline?.close();
});

function startWorker(): WorkerProcess {
  const worker = spawnWorker(
    {
      ...pipeline.childEnv(),
      PORTER_LOCK_DURATION_MS: '2000',
    },
    ['--concurrency', '4'],
  );
  workers.push(worker);
  return worker;
}

describe('a worker killed with SIGKILL three times during a 20,000-record import', () => {
  it('the import completes with exact counts and no user created twice', async () => {
    const total = 20_000;
    const rows = Array.from({ length: total }, (_, index) => [
      `crash.user${index + 1}`,
      `First${index + 1}`,
    ]);
    const submitted = await pipeline.submit(csv(['username', 'firstName'], rows), {
      resource: 'users',
      mode: 'create',
    });
    let worker = startWorker();
    for (const fraction of [0.15, 0.4, 0.65]) {
      await waitFor(
        async () => {
          const info = await pipeline.context.store.get(submitted.id);
          return info && info.done >= total * fraction ? true : undefined;
        },
        { timeoutMs: 120_000, what: `${fraction * 100}% of the import` },
      );
      worker.child.kill('SIGKILL');
      expect(await worker.exited).toBe('SIGKILL');
      worker = startWorker();
    }
    const info = await pipeline.waitFinal(submitted.id, 180_000);
    expect(info.state).toBe('completed');
    expect(info.counts).toEqual({
      succeeded: total,
      failed: 0,
      skipped: 0,
      unprocessed: 0,
      planned: 0,
    });
    const created = pipeline.sandbox.store
      .users()
      .filter((user) => user.username?.startsWith('crash.'));
    expect(created).toHaveLength(total);
    expect(new Set(created.map((user) => user.username)).size).toBe(total);
    const results = await pipeline.results(submitted.id);
    const idOf = new Map(created.map((user) => [user.username, user.userId]));
    expect(results.every((result) => result.id === idOf.get(result.key!))).toBe(true);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  }, 300_000);
});
