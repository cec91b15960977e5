import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireMigration, stageRunnerDeps, startMigration } from '../../src/app/migrations.js';
import { settleStage, startStage } from '../../src/migrate/stage-runner.js';
import { prepareJobId } from '../../src/queue/import-queue.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { bundleText, seedSource } from './migrate-fixture.js';

let source: RunningSandbox;
let pipeline: Pipeline;

beforeAll(async () => {
  source = await startSandbox({ port: 0 });
  // no workers: the test runs the stage itself, as a migration worker would
  pipeline = await startPipeline({ workers: false });
});
afterAll(async () => {
  await pipeline?.close();
  await source?.close();
});

describe('a stage whose import was received whole but never had its preparation queued', () => {
  it('queues the preparation when the stage runs again, and the stage then settles', async () => {
    await seedSource(source.url, { groups: 3, usersPerGroup: 2, aclsPerGroup: 1 });
    const migration = await startMigration(pipeline.context, {
      source: Readable.from([Buffer.from(await bundleText(source.url))]),
      options: { mode: 'upsert', dryRun: false, allowAdmin: false, batchSize: 50 },
    });
    const deps = stageRunnerDeps(pipeline.context);
    const importId = (await startStage(deps, migration.id, 'groups'))!;
    const queue = pipeline.context.importQueue;
    expect(await queue.getJob(prepareJobId(importId))).toBeDefined();
    // the moment a worker dies between the upload recorded whole and its preparation queued
    await queue.remove(prepareJobId(importId));
    expect((await pipeline.context.store.get(importId))?.state).toBe('queued');
    expect(await queue.getJob(prepareJobId(importId))).toBeUndefined();

    // the stage job runs again (its lock lapsed): the same import, its preparation queued again
    expect(await startStage(deps, migration.id, 'groups')).toBe(importId);
    expect(await queue.getJob(prepareJobId(importId))).toBeDefined();
    // queued once: running the stage again while the job waits adds nothing
    await startStage(deps, migration.id, 'groups');
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });

    const workers = pipeline.startWorkers({ concurrency: 2 });
    try {
      await waitFor(
        async () => ((await settleStage(deps, migration.id, 'groups')) ? true : undefined),
        {
          timeoutMs: 60_000,
          what: 'the groups stage to settle',
        },
      );
      const info = await requireMigration(pipeline.context, migration.id);
      const groups = info.stages.find((stage) => stage.stage === 'groups')!;
      expect([groups.phase, groups.importId, groups.counts?.succeeded]).toEqual([
        'done',
        importId,
        3,
      ]);
      expect(pipeline.sandbox.store.counts().groups).toBe(3);
      // prepared now: running the stage again queues nothing more
      const prepared = await pipeline.context.store.get(importId);
      expect(prepared?.lookup).toBeDefined();
      await startStage(deps, migration.id, 'groups');
      expect(await queue.getJob(prepareJobId(importId))).toBeUndefined();
    } finally {
      await workers.close();
    }
  }, 120_000);
});
