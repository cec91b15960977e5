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
import {
  getImportSchedule,
  listImportSchedules as listImportSchedulers,
  removeImportSchedule,
  upsertImportSchedule,
  type ImportScheduleInfo,
  type ImportScheduleJobData,
  type ScheduledImportRequest,
} from '../queue/import-schedules.js';
import { checkSchedule } from '../queue/schedules.js';
import type { PorterContext } from './context.js';
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
 * Creates or replaces the import schedule `name`; an export schedule of that name is replaced
 * too (one schedule per name). The file must be an absolute path: the worker reads it.
 */
export async function addImportSchedule(
  context: PorterContext,
  submission: ImportScheduleSubmission,
): Promise<ImportScheduleInfo> {
  checkSchedule(submission);
  if (!isAbsolute(submission.request.file)) {
    throw new PorterError(
      'PORTER_USAGE',
      `the file of a scheduled import must be an absolute path, got ${JSON.stringify(submission.request.file)}`,
    );
  }
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
export function runImportScheduleJob(
  context: PorterContext,
  data: ImportScheduleJobData,
  jobId: string | undefined,
): Promise<ScheduleRun> {
  const { request } = data;
  return runScheduledImport(
    {
      name: data.schedule.name,
      file: request.file,
      options: request.options,
      evenUnchanged: request.evenUnchanged,
      jobId,
    },
    {
      history: history(context),
      startImport: (source, fileName, options, onCreated) =>
        runAsWorker(
          context,
          {
            name: `schedule:${data.schedule.name}`,
            via: 'schedule',
            onBehalfOf: data.schedule.addedBy,
          },
          'import.start',
          {
            schedule: data.schedule.name,
            file: request.file,
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
