/**
 * Import schedule use cases shared by the CLI, the HTTP API and the workers: add (replacing
 * any schedule of the same name, export or import), list, read with its history, remove,
 * and run once when a scheduler fires.
 */
import { isAbsolute } from 'node:path';
import { currentPrincipal } from '../auth/acting.js';
import { PorterError } from '../errors/porter-error.js';
import { ScheduleHistory, type ScheduleRun } from '../imports/schedule-history.js';
import { runScheduledImport } from '../imports/scheduled-import.js';
import { runScheduledSourceImport } from '../imports/scheduled-source-import.js';
import { loadSources } from '../sources/sources.js';
import {
  getImportSchedule,
  listImportSchedules as listImportSchedulers,
  removeImportSchedule,
  upsertImportSchedule,
  type ImportScheduleInfo,
  type ImportScheduleJobData,
  type ScheduledImportRequest,
  type ScheduledSource,
} from '../queue/import-schedules.js';
import { checkSchedule } from '../queue/schedules.js';
import type { PorterContext } from './context.js';
import { emitInBackground } from './notify.js';
import { scheduleFailedNotice, scheduleMissedNotice } from '../notify/work-notices.js';
import { boundToTarget, startImport } from './imports.js';
import { runAsWorker } from './worker-action.js';

export interface ImportScheduleSubmission {
  name: string;
  cron: string;
  tz?: string;
  request: ScheduledImportRequest;
}

export interface ImportScheduleDescription extends ImportScheduleInfo {
  /** The last runs, newest first. */
  runs: ScheduleRun[];
}

function history(context: PorterContext): ScheduleHistory {
  return new ScheduleHistory({ redis: context.redis, prefix: context.env.PORTER_PREFIX });
}

function ttlSeconds(context: PorterContext): number {
  return Math.round(context.env.PORTER_RESULT_TTL_DAYS * 24 * 3600);
}

/**
 * A schedule reads a file (an absolute path: the worker reads it) or a directory source named in
 * PORTER_SOURCES_FILE (here, and again by the worker at each run), not both; a source reads
 * users or groups.
 */
function checkScheduledInput(context: PorterContext, request: ScheduledImportRequest): void {
  if ((request.file === undefined) === (request.source === undefined)) {
    throw new PorterError('PORTER_USAGE', 'a scheduled import reads a file or a source, not both');
  }
  if (request.source !== undefined) {
    if (request.options.resource === 'acls') {
      throw new PorterError('PORTER_USAGE', 'a source is read for users or groups, not ACLs');
    }
    if (request.evenUnchanged) {
      throw new PorterError(
        'PORTER_USAGE',
        'evenUnchanged is for a file; a source is read at every run',
      );
    }
    // the name must be known here; its secret is read by the worker at each run
    loadSources(context.env).named(request.source.name);
    return;
  }
  if (!isAbsolute(request.file!)) {
    throw new PorterError(
      'PORTER_USAGE',
      `the file of a scheduled import must be an absolute path, got ${JSON.stringify(request.file)}`,
    );
  }
}

/**
 * Creates or replaces the import schedule `name`; an export schedule of that name is replaced
 * too (one schedule per name).
 */
export async function addImportSchedule(
  context: PorterContext,
  submission: ImportScheduleSubmission,
): Promise<ImportScheduleInfo> {
  checkSchedule(submission);
  checkScheduledInput(context, submission.request);
  // the schedule records its target's fingerprint now: a run after the target was configured
  // otherwise is refused (PORTER_TARGET_CHANGED) rather than sent elsewhere
  const options = boundToTarget(context, submission.request.options);
  const addedBy = currentPrincipal()?.name;
  const info = await upsertImportSchedule(
    context.importScheduleQueue,
    {
      ...submission,
      request: { ...submission.request, options },
      ...(addedBy ? { addedBy } : {}),
    },
    ttlSeconds(context),
  );
  await context.exportQueue.removeJobScheduler(submission.name);
  return info;
}

/** Every import schedule, soonest first. */
export function listImportSchedules(context: PorterContext): Promise<ImportScheduleInfo[]> {
  return listImportSchedulers(context.importScheduleQueue);
}

/** The import schedule, or undefined. */
export function findImportSchedule(
  context: PorterContext,
  name: string,
): Promise<ImportScheduleInfo | undefined> {
  return getImportSchedule(context.importScheduleQueue, name);
}

/** The import schedule with its last runs, or PORTER_NOT_FOUND. */
export async function describeImportSchedule(
  context: PorterContext,
  name: string,
  limit = 20,
): Promise<ImportScheduleDescription> {
  const info = await findImportSchedule(context, name);
  if (!info) {
    throw new PorterError('PORTER_NOT_FOUND', `no import schedule named ${JSON.stringify(name)}`);
  }
  return { ...info, runs: await history(context).runs(name, limit) };
}

/** The last runs of an import schedule, newest first (kept a while after its removal too). */
export function importScheduleRuns(
  context: PorterContext,
  name: string,
  limit = 20,
): Promise<ScheduleRun[]> {
  return history(context).runs(name, limit);
}

/** Removes an import schedule; false when there was none. Its imports and history stay. */
export function deleteImportSchedule(context: PorterContext, name: string): Promise<boolean> {
  return removeImportSchedule(context.importScheduleQueue, name);
}

/**
 * One run of an import schedule, as its worker makes it: its import is started by
 * `schedule:<name>` on behalf of whoever added the schedule, between its audit events.
 */
export async function runImportScheduleJob(
  context: PorterContext,
  data: ImportScheduleJobData,
  jobId: string | undefined,
): Promise<ScheduleRun> {
  const { request } = data;
  const missed = scheduleMissedNotice(
    data.schedule.name,
    jobId,
    request.options.target,
    new Date(),
  );
  if (missed) emitInBackground(context, missed);
  const run = request.source
    ? await runSourceScheduleJob(context, data, request.source, jobId)
    : await runFileScheduleJob(context, data, request.file ?? '', jobId);
  if (run.outcome === 'failed') {
    emitInBackground(
      context,
      scheduleFailedNotice(data.schedule.name, run, request.options.target, data.schedule.addedBy),
    );
  }
  return run;
}

/** Starts `start` as the schedule's worker, on behalf of whoever added the schedule. */
function asScheduleWorker<T>(
  context: PorterContext,
  data: ImportScheduleJobData,
  what: Record<string, unknown>,
  start: () => Promise<T>,
): Promise<T> {
  return runAsWorker(
    context,
    {
      name: `schedule:${data.schedule.name}`,
      via: 'schedule',
      onBehalfOf: data.schedule.addedBy,
    },
    'import.start',
    { schedule: data.schedule.name, ...what },
    start,
  );
}

/** A run that reads the directory source whole and imports its rows, as `--source` does. */
function runSourceScheduleJob(
  context: PorterContext,
  data: ImportScheduleJobData,
  source: ScheduledSource,
  jobId: string | undefined,
): Promise<ScheduleRun> {
  const { options } = data.request;
  return runScheduledSourceImport(
    { name: data.schedule.name, jobId },
    {
      history: history(context),
      startSourceImport: (onCreated) =>
        asScheduleWorker(
          context,
          data,
          {
            source: source.name,
            incremental: source.incremental === true,
            resource: options.resource,
            mode: options.mode,
            dryRun: options.dryRun,
            target: options.target,
          },
          async () => {
            // the directory readers (LDAP) are loaded by a schedule that reads a source
            const { startSourceImport } = await import('./source-import.js');
            return startSourceImport(
              context,
              { source: source.name, options, incremental: source.incremental === true },
              onCreated,
            );
          },
        ),
    },
  );
}

/** A run that reads the file as it is now, unless unchanged since the last import. */
function runFileScheduleJob(
  context: PorterContext,
  data: ImportScheduleJobData,
  file: string,
  jobId: string | undefined,
): Promise<ScheduleRun> {
  const { request } = data;
  return runScheduledImport(
    {
      name: data.schedule.name,
      file,
      options: request.options,
      evenUnchanged: request.evenUnchanged,
      jobId,
    },
    {
      history: history(context),
      startImport: (source, fileName, options, onCreated) =>
        asScheduleWorker(
          context,
          data,
          {
            file,
            resource: options.resource,
            mode: options.mode,
            dryRun: options.dryRun,
            target: options.target,
          },
          () => startImport(context, { options, source, fileName }, onCreated),
        ),
      importState: (importId) => context.store.getState(importId),
    },
  );
}
