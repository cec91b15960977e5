/**
 * A worker whose link to Redis is cut (no answer, no reset: a partition) in the middle of an
 * import says, while still cut off, that it lost its batches' locks, once per batch; another
 * worker takes them over and nothing is created twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { startLink, type CuttableLink } from '../helpers/tcp-link.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';

let pipeline: Pipeline;
let link: CuttableLink;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false, sandbox: { faults: { latencyMs: 40 } } });
  link = await startLink(new URL(pipeline.childEnv().REDIS_URL!));
});
afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  link?.close();
  await pipeline?.close();
});

const LAPSED = 'lost the lock of running batches: not renewed for a lock period';

describe('a worker cut off from Redis', () => {
  it('says once, while still cut off, that it lost its batches; another takes them over', async () => {
    const total = 1_500;
    const rows = Array.from({ length: total }, (_, index) => [`cut.${index}`]);
    const cutOff = spawnWorker({ ...pipeline.childEnv(), REDIS_URL: link.url }, [
      '--concurrency',
      '4',
    ]);
    const taker = spawnWorker(pipeline.childEnv(), ['--concurrency', '4']);
    workers.push(cutOff, taker);
    // both take batches from the start: the cut-off one has some running when the link is cut
    await waitFor(
      async () => ((await pipeline.context.importQueue.getWorkersCount()) >= 2 ? true : undefined),
      { what: 'both workers to listen' },
    );
    const submitted = await pipeline.submit(csv(['username'], rows), {
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
    link.cut();
    await waitFor(() => (cutOff.output().includes(LAPSED) ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the cut-off worker to say it lost its locks',
    });
    const info = await pipeline.waitFinal(submitted.id, 120_000);
    expect(info.counts).toMatchObject({ succeeded: total, failed: 0, unprocessed: 0 });
    expect(pipeline.sandbox.store.stats.applied.users.created).toBe(total);

    // the link comes back: Redis's answers to the held renewals say nothing new
    link.heal();
    cutOff.child.kill('SIGTERM');
    await cutOff.exited;
    const said = cutOff
      .output()
      .split('\n')
      .filter((line) => line.includes('lost the lock'))
      .flatMap((line) => (JSON.parse(line) as { jobIds: string[] }).jobIds);
    expect(said.length).toBeGreaterThan(0);
    expect(new Set(said).size).toBe(said.length);
  }, 180_000);
});
