/**
 * Import schedules as BullMQ job schedulers, keyed by the schedule's name, on a queue of their
 * own: each run reads a file that another system overwrites (an HR feed) and imports it. The
 * schedulers behave as the export ones (src/queue/schedules.ts): they live in Redis, upserting
 * the same name leaves one, and a failing run never stops its schedule.
 */
import { Queue, type ConnectionOptions, type JobSchedulerJson, type JobsOptions } from 'bullmq';
import type { ImportOptions } from '../model/import.js';
import { checkSchedule, SCHEDULE_NAME_PATTERN } from './schedules.js';
import { queuePrefix } from '../redis/key-tags.js';

export const IMPORT_SCHEDULE_QUEUE = 'import-schedules';

/** Name of the jobs an import schedule makes. */
export const SCHEDULED_IMPORT_JOB_NAME = 'scheduled-import';

/** A directory source (PORTER_SOURCES_FILE) a schedule reads at each run instead of a file. */
export interface ScheduledSource {
  /** The source's name in the worker's PORTER_SOURCES_FILE. */
  name: string;
  /** Only the entries changed since the last read, upserted. @defaultValue false */
  incremental?: boolean;
}

/**
 * What a run of an import schedule needs: the file or the directory source it reads (one of
 * them), and the options of its imports.
 */
export interface ScheduledImportRequest {
  /** Absolute path of the file, read when the schedule fires. */
  file?: string;
  /** The directory source read when the schedule fires. */
  source?: ScheduledSource;
  options: ImportOptions;
  /** File only: import it even when its content is that of the last run. @defaultValue false */
  evenUnchanged?: boolean;
}

export interface ImportScheduleJobData {
  /** `addedBy`: the principal that added the schedule, when known. */
  schedule: { name: string; addedBy?: string };
  request: ScheduledImportRequest;
}

export interface ImportScheduleDefinition {
  name: string;
  /** Cron pattern: 5 fields, or 6 with seconds first. */
  cron: string;
  /** IANA time zone of the pattern. @defaultValue the worker's local zone */
  tz?: string;
  request: ScheduledImportRequest;
  /** The principal that added it; its runs start imports on that principal's behalf. */
  addedBy?: string;
}

export interface ImportScheduleInfo extends ImportScheduleDefinition {
  kind: 'import';
  /** When it runs next (ISO time). */
  next?: string;
  /** Runs started so far. */
  iterations?: number;
}

export interface ImportScheduleQueueOptions {
  connection: ConnectionOptions;
  prefix: string;
  /** Seconds finished jobs stay for inspection. @defaultValue 7 days */
  jobTtlSeconds?: number;
}

/** One attempt per run: a run that failed waits for the next time, it is not repeated. */
export function importScheduleJobOptions(jobTtlSeconds = 7 * 24 * 3600): JobsOptions {
  return {
    attempts: 1,
    removeOnComplete: { age: jobTtlSeconds },
    removeOnFail: { age: jobTtlSeconds },
  };
}

/** The queue of import schedule runs under the porter prefix. */
export function createImportScheduleQueue(
  options: ImportScheduleQueueOptions,
): Queue<ImportScheduleJobData> {
  return new Queue<ImportScheduleJobData>(IMPORT_SCHEDULE_QUEUE, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, IMPORT_SCHEDULE_QUEUE),
    defaultJobOptions: importScheduleJobOptions(options.jobTtlSeconds),
  });
}

function toInfo(
  scheduler: JobSchedulerJson<ImportScheduleJobData>,
): ImportScheduleInfo | undefined {
  const data = scheduler.template?.data;
  if (!data?.request || scheduler.pattern === undefined) return undefined;
  const info: ImportScheduleInfo = {
    kind: 'import',
    name: scheduler.key,
    cron: scheduler.pattern,
    request: data.request,
  };
  if (data.schedule?.addedBy) info.addedBy = data.schedule.addedBy;
  if (scheduler.tz) info.tz = scheduler.tz;
  if (scheduler.next) info.next = new Date(scheduler.next).toISOString();
  if (scheduler.iterationCount !== undefined) info.iterations = scheduler.iterationCount;
  return info;
}

/** Creates or replaces the import schedule `definition.name` (checked first: PORTER_USAGE). */
export async function upsertImportSchedule(
  queue: Queue<ImportScheduleJobData>,
  definition: ImportScheduleDefinition,
  jobTtlSeconds?: number,
): Promise<ImportScheduleInfo> {
  const { name, cron, tz, request, addedBy } = checkSchedule(definition);
  await queue.upsertJobScheduler(
    name,
    { pattern: cron, ...(tz === undefined ? {} : { tz }) },
    {
      name: SCHEDULED_IMPORT_JOB_NAME,
      data: { schedule: { name, ...(addedBy ? { addedBy } : {}) }, request },
      opts: importScheduleJobOptions(jobTtlSeconds),
    },
  );
  return (await getImportSchedule(queue, name)) ?? { kind: 'import', name, cron, tz, request };
}

/** The import schedule, or undefined. */
export async function getImportSchedule(
  queue: Queue<ImportScheduleJobData>,
  name: string,
): Promise<ImportScheduleInfo | undefined> {
  if (!SCHEDULE_NAME_PATTERN.test(name)) return undefined;
  const scheduler = await queue.getJobScheduler(name);
  return scheduler ? toInfo(scheduler) : undefined;
}

/** Every import schedule, soonest first. */
export async function listImportSchedules(
  queue: Queue<ImportScheduleJobData>,
): Promise<ImportScheduleInfo[]> {
  const schedulers = await queue.getJobSchedulers(0, -1, true);
  return schedulers.map(toInfo).filter((info): info is ImportScheduleInfo => info !== undefined);
}

/** Removes the import schedule (its waiting next run too); false when there was none. */
export async function removeImportSchedule(
  queue: Queue<ImportScheduleJobData>,
  name: string,
): Promise<boolean> {
  if (!SCHEDULE_NAME_PATTERN.test(name)) return false;
  return queue.removeJobScheduler(name);
}
