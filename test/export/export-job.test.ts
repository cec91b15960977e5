/**
 * Exports queued through BullMQ and run by the workers of `startWorkers`, against real Redis
 * and a sandbox: state and counts in Redis, files where the state says, and failures that
 * leave nothing behind and say why.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireExport, startExport } from '../../src/app/exports.js';
import { exportKey } from '../../src/export/export-store.js';
import { waitFor } from '../helpers/redis.js';
import { listTree, startExportHarness, type ExportHarness } from './export-fixture.js';

describe('a queued export', () => {
  let harness: ExportHarness;
  beforeAll(async () => {
    harness = await startExportHarness({ sandbox: { seed: { users: 400, groups: 5, acls: 8 } } });
  });
  afterAll(async () => harness?.close());

  it('is run by a worker; its state has the counts, the directory and the files', async () => {
    const { context, sandbox } = harness.pipeline;
    const queued = await startExport(context, {
      resource: 'all',
      format: 'ndjson',
      outDir: harness.outDir,
    });
    expect(queued).toMatchObject({
      state: 'queued',
      written: 0,
      dir: join(harness.outDir, queued.id),
    });
    const info = await harness.waitExport(queued.id);
    const counts = sandbox.store.counts();
    expect(info).toMatchObject({
      state: 'completed',
      counts,
      written: 413,
      files: expect.any(Array),
    });
    expect(info.startedAt).toBeDefined();
    expect(info.finishedAt).toBeDefined();
    expect(await listTree(info.dir)).toEqual([
      'acls.ndjson',
      'groups.ndjson',
      'manifest.json',
      'users.ndjson',
    ]);
    const users = (await readFile(join(info.dir, 'users.ndjson'), 'utf8')).trimEnd().split('\n');
    expect(users).toHaveLength(counts.users);
    const ttl = await context.redis.ttl(exportKey(context.env.PORTER_PREFIX, queued.id));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(context.env.PORTER_RESULT_TTL_DAYS * 86_400);
    expect((await context.exportStore.list()).map((item) => item.id)).toContain(queued.id);
  });

  it('interrupted by a stopping worker, it goes back to the queue and completes on the next one', async () => {
    const { context, sandbox, workers } = harness.pipeline;
    const exportWorker = workers!.workers.find((worker) => worker.name === 'exports')!;
    sandbox.setFaults({ latencyMs: 300 });
    try {
      const queued = await startExport(context, {
        resource: 'users',
        format: 'csv',
        outDir: harness.outDir,
      });
      await waitFor(async () =>
        (await context.exportStore.get(queued.id))?.state === 'running' ? true : undefined,
      );
      exportWorker.cancelAllJobs('worker stopping');
      const info = await harness.waitExport(queued.id);
      expect(info).toMatchObject({ state: 'completed', counts: { users: 400 } });
      const lines = (await readFile(join(info.dir, 'users.csv'), 'utf8')).trimEnd().split('\n');
      expect(lines).toHaveLength(401);
      const job = await context.exportQueue.getJob(queued.id);
      expect(job?.attemptsStarted).toBeGreaterThanOrEqual(2);
    } finally {
      sandbox.setFaults({ latencyMs: 0 });
    }
  });

  it('an unknown export id is PORTER_NOT_FOUND', async () => {
    await expect(requireExport(harness.pipeline.context, 'exp_nope')).rejects.toMatchObject({
      code: 'PORTER_NOT_FOUND',
    });
  });
});

describe('a failing export', () => {
  let harness: ExportHarness;
  // with failRate 0.5, each request draws once: the script says which fail, then `thenFail`
  let script: boolean[] = [];
  let thenFail = false;
  beforeAll(async () => {
    harness = await startExportHarness({
      sandbox: {
        seed: { users: 300, groups: 4 },
        random: () => ((script.length > 0 ? script.shift() : thenFail) ? 0 : 0.99),
      },
      env: { PORTER_MAX_ATTEMPTS: '3' },
    });
  });
  afterEach(() => harness.pipeline.sandbox.setFaults({ failRate: 0 }));
  afterAll(async () => harness?.close());

  it('is retried, then reported failed with the reason, and leaves no file at all', async () => {
    const { context, sandbox } = harness.pipeline;
    script = [false];
    thenFail = true;
    sandbox.setFaults({ failRate: 0.5 });
    const before = sandbox.store.stats.faults.failed;
    const queued = await startExport(context, {
      resource: 'all',
      format: 'csv',
      outDir: harness.outDir,
    });
    const info = await harness.waitExport(queued.id);
    expect(info.state).toBe('failed');
    expect(info.reason).toMatch(/injected failure/);
    // groups.csv was complete before users failed three times; it went with the rest
    expect(sandbox.store.stats.faults.failed - before).toBe(3);
    expect(await listTree(harness.outDir)).toEqual([]);
    // the job fails (once, no blind retry) right after the state is written
    const job = await waitFor(async () => {
      const found = await context.exportQueue.getJob(queued.id);
      return (await found?.getState()) === 'failed' ? found : undefined;
    });
    expect(job.attemptsMade).toBe(1);
  });

  it('completes when a read fails and then answers within the retries', async () => {
    const { context, sandbox } = harness.pipeline;
    script = [true];
    thenFail = false;
    sandbox.setFaults({ failRate: 0.5 });
    const before = sandbox.store.stats.faults.failed;
    const queued = await startExport(context, {
      resource: 'users',
      format: 'csv',
      outDir: harness.outDir,
    });
    const info = await harness.waitExport(queued.id);
    expect(sandbox.store.stats.faults.failed - before).toBe(1);
    expect(info).toMatchObject({ state: 'completed', counts: { users: 300 } });
  });
});

describe('a read that times out', () => {
  let harness: ExportHarness;
  beforeAll(async () => {
    harness = await startExportHarness({
      sandbox: { seed: { groups: 4 }, faults: { latencyMs: 1_000 } },
      env: { PORTER_MAX_ATTEMPTS: '2', ADMIN_TIMEOUT_MS: '300' },
    });
  });
  afterAll(async () => harness?.close());

  it('is retried like any read, and the export fails when it keeps timing out', async () => {
    const queued = await startExport(harness.pipeline.context, {
      resource: 'groups',
      format: 'json',
      outDir: harness.outDir,
    });
    const info = await harness.waitExport(queued.id);
    expect(info.state).toBe('failed');
    expect(info.reason).toMatch(/no answer|timeout/i);
    expect(await listTree(harness.outDir)).toEqual([]);
  });
});
