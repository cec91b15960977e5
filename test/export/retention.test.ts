/**
 * `--keep N`: older completed runs of the schedule go, and nothing porter did not make: not
 * other schedules' runs, not runs in progress, not foreign directories or files.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSchedule, deleteSchedule } from '../../src/app/exports.js';
import { newExportId } from '../../src/export/export-id.js';
import type { ExportInfo } from '../../src/export/export-types.js';
import { MANIFEST_KIND, type ExportManifest } from '../../src/export/manifest.js';
import { applyRetention } from '../../src/export/retention.js';
import { withExportLinks } from '../../src/http/routes/exports.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';
import { listTree, startExportHarness, type ExportHarness } from './export-fixture.js';

/** A finished run of `schedule` with one data file, as porter writes it. */
async function fakeRun(scheduleDir: string, schedule: string, time: number): Promise<string> {
  const id = newExportId(time);
  const dir = join(scheduleDir, id);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'users.csv'), 'username\n');
  const manifest: Partial<ExportManifest> = {
    porter: MANIFEST_KIND,
    manifestVersion: 1,
    id,
    schedule,
    files: [
      { name: 'users.csv', content: 'users', format: 'csv', records: 0, bytes: 9, sha256: '' },
    ],
  };
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return id;
}

describe('applyRetention', () => {
  let scheduleDir: string;
  beforeAll(async () => {
    scheduleDir = await mkdtemp(join(tmpdir(), 'porter-retention-'));
  });
  afterAll(async () => rm(scheduleDir, { recursive: true, force: true }));

  it('removes the oldest runs of the schedule beyond keep, and only what porter wrote', async () => {
    const base = Date.UTC(2026, 0, 1);
    const runs = [];
    for (let day = 0; day < 5; day++)
      runs.push(await fakeRun(scheduleDir, 'nightly', base + day * 86_400_000));
    // the oldest run also holds a file someone put there: porter's files go, the directory stays
    await writeFile(join(scheduleDir, runs[0]!, 'notes.txt'), 'mine');
    const other = await fakeRun(scheduleDir, 'other-schedule', base - 86_400_000);
    const inProgress = newExportId(base - 2 * 86_400_000);
    await mkdir(join(scheduleDir, inProgress));
    await writeFile(join(scheduleDir, inProgress, 'users.csv'), 'username\n');
    await mkdir(join(scheduleDir, 'photos'));
    await writeFile(join(scheduleDir, 'README.txt'), 'hello');

    const current = runs[4]!;
    const result = await applyRetention({
      scheduleDir,
      schedule: 'nightly',
      keep: 2,
      currentId: current,
    });
    expect(result.removed.sort()).toEqual([runs[0], runs[1], runs[2]].sort());
    expect(result.keptForeign).toEqual([runs[0]]);
    expect((await readdir(scheduleDir)).sort()).toEqual(
      ['README.txt', 'photos', inProgress, other, runs[0]!, runs[3]!, current].sort(),
    );
    expect(await readdir(join(scheduleDir, runs[0]!))).toEqual(['notes.txt']);
    expect(await listTree(join(scheduleDir, inProgress))).toEqual(['users.csv']);
  });

  it('never removes the current run, even when it is not the newest', async () => {
    // an older run that finishes after a newer one: it may remove runs older than itself only
    const dir = join(scheduleDir, 'clock-skew');
    const oldest = await fakeRun(dir, 'skewed', Date.UTC(2026, 4, 31));
    const newer = await fakeRun(dir, 'skewed', Date.UTC(2026, 5, 2));
    const current = await fakeRun(dir, 'skewed', Date.UTC(2026, 5, 1));
    const result = await applyRetention({
      scheduleDir: dir,
      schedule: 'skewed',
      keep: 1,
      currentId: current,
    });
    expect(result.removed).toEqual([oldest]);
    expect((await readdir(dir)).sort()).toEqual([current, newer].sort());
  });

  it('counts the current run among the kept even before its manifest is there', async () => {
    const dir = join(scheduleDir, 'no-manifest-yet');
    const older = await fakeRun(dir, 'early', Date.UTC(2026, 5, 1));
    const current = newExportId(Date.UTC(2026, 5, 3));
    await mkdir(join(dir, current));
    const result = await applyRetention({
      scheduleDir: dir,
      schedule: 'early',
      keep: 2,
      currentId: current,
    });
    expect(result.removed).toEqual([]);
    expect((await readdir(dir)).sort()).toEqual([current, older].sort());
  });
});

describe('a schedule with --keep', () => {
  let harness: ExportHarness;
  beforeAll(async () => {
    harness = await startExportHarness({ sandbox: { seed: { users: 20, groups: 2 } } });
  });
  afterAll(async () => harness?.close());

  it('keeps its newest runs after each successful run', { timeout: 60_000 }, async () => {
    const { context } = harness.pipeline;
    await addSchedule(context, {
      name: 'kept',
      cron: '*/1 * * * * *',
      resource: 'users',
      format: 'csv',
      outDir: harness.outDir,
      keep: 2,
    });
    await waitFor(
      async () => {
        const runs = (await context.exportStore.list()).filter(
          (info) => info.schedule?.name === 'kept',
        );
        return runs.filter((info) => info.state === 'completed').length >= 4 ? runs : undefined;
      },
      { timeoutMs: 20_000, what: 'four runs of kept' },
    );
    await deleteSchedule(context, 'kept');
    const settled = await waitFor(
      async () => {
        const runs = (await context.exportStore.list()).filter(
          (info) => info.schedule?.name === 'kept',
        );
        return runs.every((info) => info.state === 'completed' || info.state === 'failed')
          ? runs
          : undefined;
      },
      { what: 'the runs of kept to end' },
    );
    const completed = settled
      .filter((info: ExportInfo) => info.state === 'completed')
      .map((info) => info.id)
      .sort();
    expect((await readdir(join(harness.outDir, 'kept'))).sort()).toEqual(completed.slice(-2));
    // porter status of a run shows the export; schedule history lists the schedule's runs
    const env = harness.pipeline.childEnv();
    const newest = completed.at(-1)!;
    const status = await runPorter(['status', newest], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`export ${newest} completed`);
    const history = await runPorter(['schedule', 'history', 'kept'], env);
    expect(history.code, history.stderr).toBe(0);
    const lines = history.stdout.trim().split('\n');
    expect(lines).toHaveLength(settled.length);
    expect(lines[0]).toContain(settled[0]!.id);
    expect(history.stdout).toContain('files removed by retention');
    // the removed runs say so, and offer no file to download
    for (const id of completed) {
      const info = withExportLinks((await context.exportStore.get(id))!);
      if (completed.slice(-2).includes(id)) {
        expect(info.removedAt, id).toBeUndefined();
        expect(Object.keys(info.links)).toContain('manifest.json');
      } else {
        expect(info.removedAt, id).toBeDefined();
        expect(Object.keys(info.links)).toEqual(['self']);
      }
    }
  });
});
