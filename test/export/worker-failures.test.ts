/**
 * Exports whose job fails without the run ending: a run whose workers die on it twice is
 * failed by BullMQ as stalled without running it again, and its state must say `failed`, not
 * stay `running` for ever. And a 429 during an export makes every worker back off through the
 * shared request gate, then the export completes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Worker } from 'bullmq';
import { requireExport, startExport } from '../../src/app/exports.js';
import { EXPORT_QUEUE, type ExportJobData } from '../../src/queue/export-queue.js';
import { queuePrefix } from '../../src/redis/key-tags.js';
import { waitFor } from '../helpers/redis.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';
import { listTree, startExportHarness, type ExportHarness } from './export-fixture.js';

describe('an export whose job fails without the run ending', () => {
  let harness: ExportHarness;
  const spawned: WorkerProcess[] = [];
  beforeAll(async () => {
    harness = await startExportHarness({
      workers: false,
      sandbox: { seed: { users: 50, groups: 2 } },
      env: { PORTER_LOCK_DURATION_MS: '1000' },
    });
  });
  afterAll(async () => {
    for (const worker of spawned) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) {
        worker.child.kill('SIGKILL');
        await worker.exited;
      }
    }
    harness.pipeline.sandbox.setFaults({ latencyMs: 0 });
    await harness?.close();
  });

  function startWorkerProcess(): WorkerProcess {
    const { context, sandbox } = harness.pipeline;
    const worker = spawnWorker({
      REDIS_URL: context.env.REDIS_URL,
      PORTER_PREFIX: context.env.PORTER_PREFIX,
      ADMIN_BASE_URL: sandbox.url,
      PORTER_EXPORT_DIR: harness.outDir,
      PORTER_LOCK_DURATION_MS: '1000',
    });
    spawned.push(worker);
    return worker;
  }

  it('is reported failed with the job reason when it is read', async () => {
    const { context } = harness.pipeline;
    const queued = await startExport(context, {
      resource: 'groups',
      format: 'json',
      outDir: harness.outDir,
    });
    // a worker takes the job and fails it without running the export
    const taker = new Worker<ExportJobData>(EXPORT_QUEUE, undefined, {
      connection: context.bullConnection,
      prefix: queuePrefix(context.env.PORTER_PREFIX, EXPORT_QUEUE),
      autorun: false,
    });
    try {
      const token = randomUUID();
      const job = await taker.getNextJob(token, { block: false });
      expect(job?.id).toBe(queued.id);
      await job!.moveToFailed(new Error('lost its worker'), token);
    } finally {
      await taker.close();
    }
    expect((await context.exportStore.get(queued.id))?.state).toBe('queued');
    const info = await requireExport(context, queued.id);
    expect(info.state).toBe('failed');
    expect(info.reason).toMatch(/lost its worker/);
    expect((await context.exportStore.get(queued.id))?.state).toBe('failed');
  });

  it('whose workers die on it twice is marked failed as stalled, and leaves no file', async () => {
    const { context, sandbox } = harness.pipeline;
    // every answer comes late: the run is always mid-read when its worker is killed
    sandbox.setFaults({ latencyMs: 20_000 });
    const queued = await startExport(context, {
      resource: 'users',
      format: 'csv',
      outDir: harness.outDir,
    });
    for (const attempt of [1, 2]) {
      const worker = startWorkerProcess();
      await waitFor(
        async () => {
          const job = await context.exportQueue.getJob(queued.id);
          const state = await job?.getState();
          return job && job.attemptsStarted >= attempt && state === 'active' ? true : undefined;
        },
        { what: `attempt ${attempt} to start`, timeoutMs: 30_000 },
      );
      await waitFor(async () =>
        (await context.exportStore.get(queued.id))?.state === 'running' ? true : undefined,
      );
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
    const last = startWorkerProcess();
    const info = await harness.waitExport(queued.id, 40_000);
    expect(info.state).toBe('failed');
    expect(info.reason).toMatch(/stalled/);
    const job = await context.exportQueue.getJob(queued.id);
    expect(await job?.getState()).toBe('failed');
    expect((await listTree(harness.outDir)).filter((name) => name.includes('users.csv'))).toEqual(
      [],
    );
    sandbox.setFaults({ latencyMs: 0 });
    last.child.kill('SIGTERM');
    await last.exited;
  });
});

describe('a 429 during an export', () => {
  let harness: ExportHarness;
  beforeAll(async () => {
    harness = await startExportHarness({
      // one request a second: the second read of the run is refused with Retry-After
      sandbox: { seed: { users: 30, groups: 3, acls: 2 }, faults: { rateLimit: 1 } },
      env: { PORTER_RETRY_MAX_MS: '2000' },
    });
  });
  afterAll(async () => harness?.close());

  it('makes every worker back off through the shared gate, then the export completes', async () => {
    const { context, sandbox } = harness.pipeline;
    const pauseAll = vi.spyOn(context.gateOf(context.targets.require('default')), 'pauseAll');
    const queued = await startExport(context, {
      resource: 'all',
      format: 'csv',
      outDir: harness.outDir,
    });
    const info = await harness.waitExport(queued.id);
    expect(info).toMatchObject({
      state: 'completed',
      counts: { users: 30, groups: 3, acls: 2 },
    });
    expect(sandbox.store.stats.faults.rateLimited).toBeGreaterThan(0);
    expect(pauseAll).toHaveBeenCalled();
    for (const [ms] of pauseAll.mock.calls) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(2000);
    }
  });
});
