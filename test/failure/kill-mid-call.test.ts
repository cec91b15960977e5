import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';

let pipeline: Pipeline;
const workers: WorkerProcess[] = [];
/** While set, answers to POSTs wait here: the records are created, their answer is held. */
let postsHeld: { promise: Promise<void>; release: () => void } | undefined;

function holdPosts(): void {
  let release = (): void => {};
  const promise = new Promise<void>((resolve) => (release = resolve));
  postsHeld = { promise, release };
}

beforeAll(async () => {
  pipeline = await startPipeline({
    workers: false,
    sandbox: {
      faults: { latencyMs: 1 },
      sleep: (ms, method) => (method === 'POST' && postsHeld ? postsHeld.promise : delay(ms)),
    },
  });
});
afterAll(async () => {
  postsHeld?.release();
  for (const worker of workers) worker.child.kill('SIGKILL');
  await pipeline?.close();
});

function startWorker(): WorkerProcess {
  const worker = spawnWorker(
    {
      ...pipeline.childEnv(),
      PORTER_LOCK_DURATION_MS: '1000',
    },
    ['--concurrency', '2'],
  );
  workers.push(worker);
  return worker;
}

describe('a worker killed while its create call is in flight', () => {
  it('the server applied the call; the next worker finds it in the send journal and looks before resending', async () => {
    holdPosts();
    const rows = Array.from({ length: 400 }, (_, index) => [`midcall.${index + 1}`]);
    const submitted = await pipeline.submit(csv(['username'], rows), {
      resource: 'users',
      mode: 'create',
    });
    const first = startWorker();
    // the POST is applied and its answer held: the worker is waiting for it
    await waitFor(() =>
      pipeline.sandbox.store.stats.applied.users.created > 0 ? true : undefined,
    );
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    const landed = pipeline.sandbox.store.stats.applied.users.created;
    postsHeld?.release();
    postsHeld = undefined;

    const second = startWorker();
    const info = await pipeline.waitFinal(submitted.id, 120_000);
    expect(info.counts).toEqual({
      succeeded: 400,
      failed: 0,
      skipped: 0,
      unprocessed: 0,
      planned: 0,
    });
    const created = pipeline.sandbox.store
      .users()
      .filter((user) => user.username?.startsWith('midcall.'));
    expect(created).toHaveLength(400);
    // what the killed call created was found, not sent again
    expect(pipeline.sandbox.store.stats.applied.users.created).toBe(400);
    expect(pipeline.sandbox.store.stats.refusals.ALREADY_EXISTS ?? 0).toBe(0);
    const results = await pipeline.results(submitted.id);
    const idOf = new Map(created.map((user) => [user.username, user.userId]));
    expect(results.every((result) => result.id === idOf.get(result.key!))).toBe(true);
    console.log(`records created by the killed call: ${landed}`);
    expect(landed).toBeGreaterThan(0);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 180_000);
});
