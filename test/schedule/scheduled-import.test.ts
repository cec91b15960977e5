/**
 * Scheduled imports as BullMQ job schedulers against real Redis and a real sandbox: a schedule
 * fires, reads the file as it is then and imports it; an unchanged file is skipped with a note
 * in the schedule's history unless asked otherwise; a missing file is a failed run, not the end
 * of the schedule; one schedule per name across exports and imports; the CLI adds, lists,
 * shows the history of and removes them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addSchedule, listSchedules } from '../../src/app/exports.js';
import {
  addImportSchedule,
  deleteImportSchedule,
  describeImportSchedule,
  importScheduleRuns,
  listImportSchedules,
} from '../../src/app/import-schedules.js';
import type { ScheduleRun } from '../../src/imports/schedule-history.js';
import type { ImportOptions } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';

const EVERY_SECOND = '*/1 * * * * *';
const USERS_UPSERT: ImportOptions = {
  resource: 'users',
  mode: 'upsert',
  batchSize: 100,
  listSeparator: '|',
  emptyAsClear: false,
  allowAdmin: false,
};

let pipeline: Pipeline;
let dir: string;
const added: string[] = [];

beforeAll(async () => {
  pipeline = await startPipeline();
  dir = await mkdtemp(join(tmpdir(), 'porter-schedule-'));
});
afterEach(async () => {
  for (const name of added.splice(0)) await deleteImportSchedule(pipeline.context, name);
});
afterAll(async () => {
  await pipeline?.context.importScheduleQueue.obliterate({ force: true }).catch(() => {});
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

async function schedule(
  name: string,
  file: string,
  extra: { evenUnchanged?: boolean } = {},
): Promise<void> {
  added.push(name);
  await addImportSchedule(pipeline.context, {
    name,
    cron: EVERY_SECOND,
    request: { file, options: USERS_UPSERT, ...extra },
  });
}

/** Waits until the schedule's history holds a run that matches; returns the runs, newest first. */
function runsUntil(
  name: string,
  found: (runs: ScheduleRun[]) => boolean,
  what: string,
): Promise<ScheduleRun[]> {
  return waitFor(
    async () => {
      const runs = await importScheduleRuns(pipeline.context, name, 100);
      return found(runs) ? runs : undefined;
    },
    { timeoutMs: 30_000, what },
  );
}

function usernames(): string[] {
  return pipeline.sandbox.store.users().map((user) => String(user.username));
}

describe('a scheduled import', () => {
  it('fires and imports the file; skips it with a note while unchanged; imports it again once it changed', async () => {
    const file = join(dir, 'hr-feed.csv');
    await writeFile(file, csv(['username', 'email'], [['hr.one', 'one@example.com']]));
    await schedule('hr-feed', file);

    const first = await runsUntil(
      'hr-feed',
      (runs) => runs.some((run) => run.outcome === 'imported'),
      'the first import',
    );
    const imported = first.find((run) => run.outcome === 'imported')!;
    expect(imported.importId).toMatch(/^imp_/);
    expect(imported.sha256).toMatch(/^[0-9a-f]{64}$/);
    const info = await pipeline.waitFinal(imported.importId!);
    expect(info).toMatchObject({ state: 'completed', source: 'hr-feed.csv', total: 1 });
    expect(usernames()).toContain('hr.one');

    const unchanged = await runsUntil(
      'hr-feed',
      (runs) => runs.some((run) => run.outcome === 'unchanged'),
      'a run that finds the file unchanged',
    );
    const skipped = unchanged.find((run) => run.outcome === 'unchanged')!;
    expect(skipped.note).toContain(`unchanged since import ${imported.importId}`);
    expect(skipped.importId).toBeUndefined();

    // the system that writes the file overwrites it
    await writeFile(
      file,
      csv(
        ['username', 'email'],
        [
          ['hr.one', 'one@example.com'],
          ['hr.two', 'two@example.com'],
        ],
      ),
    );
    const after = await runsUntil(
      'hr-feed',
      (runs) => runs.filter((run) => run.outcome === 'imported').length >= 2,
      'the import of the changed file',
    );
    const second = after.find((run) => run.outcome === 'imported')!;
    expect(second.importId).not.toBe(imported.importId);
    expect(second.sha256).not.toBe(imported.sha256);
    await pipeline.waitFinal(second.importId!);
    expect(usernames()).toContain('hr.two');

    const described = await describeImportSchedule(pipeline.context, 'hr-feed');
    expect(described).toMatchObject({ kind: 'import', name: 'hr-feed', cron: EVERY_SECOND });
    expect(described.runs.length).toBeGreaterThanOrEqual(3);
  });

  it('with evenUnchanged imports the same file at every run', async () => {
    const file = join(dir, 'always.csv');
    await writeFile(file, csv(['username'], [['always.one']]));
    await schedule('always', file, { evenUnchanged: true });
    const runs = await runsUntil(
      'always',
      (list) => list.filter((run) => run.outcome === 'imported').length >= 2,
      'two imports of the same file',
    );
    const imports = runs.filter((run) => run.outcome === 'imported');
    expect(imports[0]!.sha256).toBe(imports[1]!.sha256);
    expect(imports[0]!.importId).not.toBe(imports[1]!.importId);
    expect(runs.some((run) => run.outcome === 'unchanged')).toBe(false);
  });

  it('records a missing file as a failed run and keeps firing', async () => {
    const file = join(dir, 'not-yet.csv');
    await schedule('not-yet', file);
    const runs = await runsUntil(
      'not-yet',
      (list) => list.filter((run) => run.outcome === 'failed').length >= 2,
      'two failed runs',
    );
    expect(runs[0]!.note).toMatch(/cannot read .*not-yet\.csv \(ENOENT/);
    await writeFile(file, csv(['username'], [['late.one']]));
    await runsUntil(
      'not-yet',
      (list) => list.some((run) => run.outcome === 'imported'),
      'the import once the file is there',
    );
  });

  it('refuses a relative path, a bad cron pattern and a bad name before storing anything', async () => {
    const { context } = pipeline;
    const request = { file: 'relative.csv', options: USERS_UPSERT };
    await expect(
      addImportSchedule(context, { name: 'rel', cron: EVERY_SECOND, request }),
    ).rejects.toMatchObject({ code: 'PORTER_USAGE', message: /absolute path/ });
    const absolute = { ...request, file: join(dir, 'x.csv') };
    await expect(
      addImportSchedule(context, { name: 'bad', cron: '61 * * * *', request: absolute }),
    ).rejects.toMatchObject({ code: 'PORTER_USAGE', message: /Cron pattern/ });
    await expect(
      addImportSchedule(context, { name: '../x', cron: EVERY_SECOND, request: absolute }),
    ).rejects.toMatchObject({ code: 'PORTER_USAGE', message: /Schedule name/ });
    expect(await listImportSchedules(context)).toEqual([]);
  });

  it('is one schedule per name: an import schedule replaces an export schedule of the same name, and back', async () => {
    const { context } = pipeline;
    const file = join(dir, 'shared-name.csv');
    const exportSchedule = {
      name: 'shared',
      cron: '0 2 * * *',
      resource: 'users' as const,
      format: 'csv' as const,
      outDir: dir,
    };
    await addSchedule(context, exportSchedule);
    await addImportSchedule(context, {
      name: 'shared',
      cron: '0 3 * * *',
      request: { file, options: USERS_UPSERT },
    });
    expect(await listSchedules(context)).toEqual([]);
    expect((await listImportSchedules(context)).map((info) => info.name)).toEqual(['shared']);
    await addSchedule(context, exportSchedule);
    expect(await listImportSchedules(context)).toEqual([]);
    expect((await listSchedules(context)).map((info) => info.name)).toEqual(['shared']);
    await context.exportQueue.removeJobScheduler('shared');
  });
});

describe('porter schedule with --import', () => {
  it('adds, lists, shows the history of and removes an import schedule', async () => {
    const env = pipeline.childEnv();
    const file = join(dir, 'cli-feed.csv');
    await writeFile(file, csv(['username'], [['cli.feed']]));
    const add = await runPorter(
      [
        'schedule',
        'add',
        'cli-feed',
        '--cron',
        EVERY_SECOND,
        '--import',
        file,
        '--resource',
        'users',
        '--mode',
        'upsert',
        '--batch-size',
        '50',
      ],
      env,
    );
    expect(add.code, add.stderr).toBe(0);
    added.push('cli-feed');
    expect(add.stdout).toContain(
      `cli-feed  "${EVERY_SECOND}"  import ${file} → default: users upsert`,
    );

    const listed = await runPorter(['schedule', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        kind: 'import',
        name: 'cli-feed',
        request: expect.objectContaining({
          file,
          options: expect.objectContaining({ resource: 'users', mode: 'upsert', batchSize: 50 }),
        }),
      }),
    ]);
    await runsUntil(
      'cli-feed',
      (runs) => runs.some((run) => run.outcome === 'imported'),
      'the scheduled import',
    );
    const history = await runPorter(['schedule', 'history', 'cli-feed'], env);
    expect(history.stdout).toMatch(/imported import imp_/);

    expect((await runPorter(['schedule', 'remove', 'cli-feed'], env)).code).toBe(0);
    expect(await listImportSchedules(pipeline.context)).toEqual([]);
    const again = await runPorter(['schedule', 'remove', 'cli-feed'], env);
    expect(again.code).toBe(66);
  });

  it('refuses export options with --import, a resource of all, a missing mode, and import options without --import', async () => {
    const env = pipeline.childEnv();
    const base = ['schedule', 'add', 'x', '--cron', '0 2 * * *', '--import', join(dir, 'x.csv')];
    const keep = await runPorter(
      [...base, '--resource', 'users', '--mode', 'upsert', '--keep', '3'],
      env,
    );
    expect(keep.code).toBe(64);
    expect(keep.stderr).toMatch(/--keep is for export schedules/);
    const all = await runPorter([...base, '--resource', 'all', '--mode', 'upsert'], env);
    expect(all.code).toBe(64);
    const noMode = await runPorter([...base, '--resource', 'users'], env);
    expect(noMode.code).toBe(64);
    expect(noMode.stderr).toMatch(/--mode is required/);
    // an import option on an export schedule would be dropped without a word
    const exportWithMode = await runPorter(
      ['schedule', 'add', 'x', '--cron', '0 2 * * *', '--resource', 'users', '--mode', 'upsert'],
      env,
    );
    expect(exportWithMode.code).toBe(64);
    expect(exportWithMode.stderr).toMatch(/--mode goes with --import FILE/);
    expect(await listSchedules(pipeline.context)).toEqual([]);
    expect(await listImportSchedules(pipeline.context)).toEqual([]);
  });
});
