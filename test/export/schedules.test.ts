/**
 * Scheduled exports as BullMQ job schedulers against real Redis: checks up front, runs that
 * fire and land in DIR/<name>/<run-id>/, failing runs that do not stop the schedule, and two
 * processes upserting the same schedule at once.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPorterContext } from '../../src/app/context.js';
import {
  addSchedule,
  deleteSchedule,
  listSchedules,
  requireSchedule,
  type ScheduleSubmission,
} from '../../src/app/exports.js';
import { startWorkers } from '../../src/app/workers.js';
import { isValidExportId } from '../../src/export/export-id.js';
import type { ExportInfo } from '../../src/export/export-types.js';
import type { ExportManifest } from '../../src/export/manifest.js';
import { silentLogger } from '../../src/util/logger.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';
import { listTree, startExportHarness, type ExportHarness } from './export-fixture.js';

const EVERY_SECOND = '*/1 * * * * *';
let harness: ExportHarness;

beforeAll(async () => {
  harness = await startExportHarness({ sandbox: { seed: { users: 40, groups: 3, acls: 3 } } });
});
afterAll(async () => harness?.close());

function schedule(name: string, extra: Partial<ScheduleSubmission> = {}): ScheduleSubmission {
  return {
    name,
    cron: EVERY_SECOND,
    resource: 'groups',
    format: 'json',
    outDir: harness.outDir,
    ...extra,
  };
}

/** Waits until the schedule has `count` runs in one of `states`; returns them oldest first. */
async function runsOf(
  name: string,
  count: number,
  states: ExportInfo['state'][] = ['completed'],
): Promise<ExportInfo[]> {
  return waitFor(
    async () => {
      const runs = (await harness.pipeline.context.exportStore.list()).filter(
        (info) => info.schedule?.name === name && states.includes(info.state),
      );
      return runs.length >= count ? runs.reverse() : undefined;
    },
    { timeoutMs: 20_000, what: `${count} ${states.join('/')} runs of ${name}` },
  );
}

describe('checks before anything is stored', () => {
  it.each([
    [{ cron: '61 * * * *' }, /Cron pattern "61 \* \* \* \*" is not valid/],
    [{ cron: 'every day' }, /Cron pattern "every day" is not valid/],
    [{ cron: '' }, /never runs/],
    [{ cron: '0 2 * *' }, /Cron pattern "0 2 \* \*" has 4 fields; use 5 fields/],
    [{ cron: '5' }, /Cron pattern "5" has 1 field; use 5 fields/],
    [{ cron: '0 0 2 * * * 2026' }, /Cron pattern "0 0 2 \* \* \* 2026" .*use 5 fields/],
    [{ tz: 'Mars/Olympus' }, /Unknown time zone "Mars\/Olympus"/],
    [{ name: '../escape' }, /Schedule name/],
    [{ keep: 0 }, /keep must be a whole number above 0/],
    [{ format: 'bundle' as const }, /use --resource all/],
  ])('%j is refused with PORTER_USAGE', async (extra, message) => {
    const submission = { ...schedule('checked'), ...extra };
    await expect(addSchedule(harness.pipeline.context, submission)).rejects.toMatchObject({
      code: 'PORTER_USAGE',
      message: expect.stringMatching(message),
    });
    expect(await listSchedules(harness.pipeline.context)).toEqual([]);
  });
});

describe('a schedule', () => {
  it('is listed with its next time, fires, and writes each run to DIR/<name>/<run-id>/', async () => {
    const { context } = harness.pipeline;
    const added = await addSchedule(context, schedule('nightly', { tz: 'Europe/Berlin' }));
    expect(added).toMatchObject({ name: 'nightly', cron: EVERY_SECOND, tz: 'Europe/Berlin' });
    expect(Date.parse(added.next!)).toBeGreaterThan(Date.now() - 2_000);
    expect(await requireSchedule(context, 'nightly')).toMatchObject({ name: 'nightly' });
    const runs = await runsOf('nightly', 2);
    await deleteSchedule(context, 'nightly');
    const [first, second] = runs;
    expect(first!.id < second!.id).toBe(true);
    for (const run of [first!, second!]) {
      expect(isValidExportId(run.id)).toBe(true);
      expect(run.dir).toBe(join(harness.outDir, 'nightly', run.id));
      const manifest = JSON.parse(
        await readFile(join(run.dir, 'manifest.json'), 'utf8'),
      ) as ExportManifest;
      expect(manifest).toMatchObject({ id: run.id, schedule: 'nightly', counts: { groups: 3 } });
    }
    await expect(requireSchedule(context, 'nightly')).rejects.toMatchObject({
      code: 'PORTER_NOT_FOUND',
    });
    await expect(deleteSchedule(context, 'nightly')).rejects.toMatchObject({
      code: 'PORTER_NOT_FOUND',
    });
  });

  it('keeps running after a run fails; the failed run leaves no files', async () => {
    const { context, sandbox } = harness.pipeline;
    sandbox.setFaults({ failRate: 1 });
    try {
      await addSchedule(context, schedule('flaky'));
      const [failed] = await runsOf('flaky', 1, ['failed']);
      expect(failed!.reason).toMatch(/injected failure/);
      expect(await listTree(failed!.dir)).toEqual([]);
    } finally {
      sandbox.setFaults({ failRate: 0 });
    }
    const [completed] = await runsOf('flaky', 1);
    await deleteSchedule(context, 'flaky');
    expect(await listTree(completed!.dir)).toEqual(['groups.json', 'manifest.json']);
  });

  it('upserted by two processes at once is one schedule with one run per time; it outlives them', async () => {
    const first = harness.pipeline.context;
    const second = await createPorterContext(first.env, { logger: silentLogger });
    const secondWorkers = startWorkers(second, { concurrency: 1 });
    try {
      await Promise.all(
        [first, second, first, second].map((context) => addSchedule(context, schedule('shared'))),
      );
      expect(await first.exportQueue.getJobSchedulersCount()).toBe(1);
      expect(await first.exportQueue.getDelayedCount()).toBeLessThanOrEqual(1);
      await runsOf('shared', 3);
    } finally {
      await secondWorkers.close();
      await second.close();
    }
    // a process that starts later sees the schedule: it lives in Redis
    const later = await createPorterContext(first.env, { logger: silentLogger });
    try {
      expect((await listSchedules(later)).map((info) => info.name)).toEqual(['shared']);
      await deleteSchedule(later, 'shared');
    } finally {
      await later.close();
    }
    const runs = (await first.exportStore.list()).filter(
      (info) => info.schedule?.name === 'shared',
    );
    const times = runs.map((info) => info.id.slice(4, 23));
    expect(new Set(times).size).toBe(times.length);
    const jobs = await first.exportQueue.getJobs(['completed', 'failed', 'active']);
    const sharedJobs = jobs.filter((job) => job.id?.startsWith('repeat:shared:'));
    expect(sharedJobs.length).toBe(new Set(sharedJobs.map((job) => job.id)).size);
    expect(runs.length).toBeGreaterThanOrEqual(sharedJobs.filter((job) => job.finishedOn).length);
  });
});

describe('a schedule added by two porter processes at once', () => {
  it('is one job scheduler with one next run', async () => {
    const { context, sandbox } = harness.pipeline;
    const env = {
      REDIS_URL: context.env.REDIS_URL,
      PORTER_PREFIX: context.env.PORTER_PREFIX,
      PORTER_EXPORT_DIR: harness.outDir,
      ADMIN_BASE_URL: sandbox.url,
    };
    const args = ['schedule', 'add', 'twice', '--cron', '0 2 * * *', '--resource', 'users'];
    const results = await Promise.all([runPorter(args, env), runPorter(args, env)]);
    try {
      expect(results.map((result) => result.code)).toEqual([0, 0]);
      expect(await context.exportQueue.getJobSchedulersCount()).toBe(1);
      expect(await context.exportQueue.getDelayedCount()).toBe(1);
      expect((await listSchedules(context)).map((info) => info.name)).toEqual(['twice']);
    } finally {
      await deleteSchedule(context, 'twice');
    }
  });
});

describe('a schedule across a restart', () => {
  let quiet: ExportHarness;
  beforeAll(async () => {
    // no workers of its own: every worker of this test is started and closed by the test
    quiet = await startExportHarness({ workers: false, sandbox: { seed: { groups: 2 } } });
  });
  afterAll(async () => quiet?.close());

  /** The completed runs of `name`, read from the state in Redis. */
  async function completedRuns(name: string): Promise<ExportInfo[]> {
    return (await quiet.pipeline.context.exportStore.list()).filter(
      (info) => info.schedule?.name === name && info.state === 'completed',
    );
  }

  it('runs again on a fresh worker after every worker and context was closed', async () => {
    const before = await createPorterContext(quiet.pipeline.context.env, { logger: silentLogger });
    const beforeWorkers = startWorkers(before, { concurrency: 1 });
    try {
      await addSchedule(before, {
        name: 'restarted',
        cron: EVERY_SECOND,
        resource: 'groups',
        format: 'json',
        outDir: quiet.outDir,
      });
      await waitFor(
        async () => ((await completedRuns('restarted')).length > 0 ? true : undefined),
        {
          what: 'a run before the restart',
        },
      );
    } finally {
      await beforeWorkers.close();
      await before.close();
    }
    // every run so far has ended: none is left half done by the closed worker
    const ranBefore = (await completedRuns('restarted')).map((info) => info.id);

    const after = await createPorterContext(quiet.pipeline.context.env, { logger: silentLogger });
    const afterWorkers = startWorkers(after, { concurrency: 1 });
    try {
      expect((await listSchedules(after)).map((info) => info.name)).toEqual(['restarted']);
      const run = await waitFor(
        async () => (await completedRuns('restarted')).find((info) => !ranBefore.includes(info.id)),
        { what: 'a run after the restart' },
      );
      expect(await listTree(run.dir)).toEqual(['groups.json', 'manifest.json']);
      await deleteSchedule(after, 'restarted');
    } finally {
      await afterWorkers.close();
      await after.close();
    }
  });
});
