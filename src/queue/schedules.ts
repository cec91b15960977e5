/**
 * Export schedules as BullMQ job schedulers, keyed by the schedule's name. A scheduler lives
 * in Redis, so it survives restarts, and upserting the same name from several processes at
 * once leaves one scheduler with one next job (its job ids are `repeat:<name>:<time>`), so a
 * time never runs twice. BullMQ makes the next job when a run starts, so a failing run never
 * stops its schedule.
 */
import { getNextMillis, type JobSchedulerJson, type Queue } from 'bullmq';
import { PorterError } from '../errors/porter-error.js';
import type { ExportRequest } from '../export/export-types.js';
import { EXPORT_JOB_NAME, exportJobOptions, type ExportJobData } from './export-queue.js';

/** Schedule names become directory names and scheduler ids. */
export const SCHEDULE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export interface ScheduleDefinition {
  name: string;
  /** Cron pattern: 5 fields, or 6 with seconds first. */
  cron: string;
  /** IANA time zone of the pattern. @defaultValue the worker's local zone */
  tz?: string;
  request: ExportRequest;
  /** Completed runs kept; older ones are removed after each successful run. @defaultValue all */
  keep?: number;
}

export interface ScheduleInfo extends ScheduleDefinition {
  /** When it runs next (ISO time). */
  next?: string;
  /** Runs started so far. */
  iterations?: number;
}

function usage(message: string): PorterError {
  return new PorterError('PORTER_USAGE', message);
}

/** When a schedule runs, whatever it runs (an export, an import). */
export type ScheduleTiming = Pick<ScheduleDefinition, 'name' | 'cron' | 'tz' | 'keep'>;

/**
 * Checks a schedule up front (name, cron pattern, time zone, keep); throws PORTER_USAGE. A
 * pattern must have 5 fields, or 6 with seconds first.
 */
export function checkSchedule<T extends ScheduleTiming>(definition: T, now = Date.now()): T {
  const { name, cron, tz, keep } = definition;
  if (typeof name !== 'string' || !SCHEDULE_NAME_PATTERN.test(name)) {
    throw usage(
      `Schedule name ${JSON.stringify(name)}: use 1 to 64 letters, digits, "_" or "-", starting with a letter or digit.`,
    );
  }
  if (tz !== undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: tz });
    } catch {
      throw usage(`Unknown time zone ${JSON.stringify(tz)}; use an IANA name like Europe/Berlin.`);
    }
  }
  let next: number | undefined;
  try {
    next =
      typeof cron === 'string' && cron.trim() !== ''
        ? getNextMillis(now, { pattern: cron, tz })
        : undefined;
  } catch (error) {
    throw usage(
      `Cron pattern ${JSON.stringify(cron)} is not valid (${(error as Error).message}); ` +
        'use 5 fields like "0 2 * * *", or 6 with seconds first.',
    );
  }
  if (next === undefined || !Number.isFinite(next)) {
    throw usage(`Cron pattern ${JSON.stringify(cron)} never runs; use a pattern like "0 2 * * *".`);
  }
  // the parser takes fewer fields (and fills the rest in): a pattern that runs far more often
  // than meant would be stored
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    throw usage(
      `Cron pattern ${JSON.stringify(cron)} has ${fields} field${fields === 1 ? '' : 's'}; ` +
        'use 5 fields like "0 2 * * *", or 6 with seconds first.',
    );
  }
  if (keep !== undefined && (!Number.isInteger(keep) || keep < 1)) {
    throw usage(`keep must be a whole number above 0, got ${String(keep)}.`);
  }
  return definition;
}

function toInfo(scheduler: JobSchedulerJson<ExportJobData>): ScheduleInfo | undefined {
  const data = scheduler.template?.data;
  if (!data?.request || scheduler.pattern === undefined) return undefined;
  const info: ScheduleInfo = {
    name: scheduler.key,
    cron: scheduler.pattern,
    request: data.request,
  };
  if (scheduler.tz) info.tz = scheduler.tz;
  if (data.schedule?.keep !== undefined) info.keep = data.schedule.keep;
  if (scheduler.next) info.next = new Date(scheduler.next).toISOString();
  if (scheduler.iterationCount !== undefined) info.iterations = scheduler.iterationCount;
  return info;
}

/** Creates or replaces the schedule `definition.name`. */
export async function upsertSchedule(
  queue: Queue<ExportJobData>,
  definition: ScheduleDefinition,
  jobTtlSeconds?: number,
): Promise<ScheduleInfo> {
  const { name, cron, tz, request, keep } = checkSchedule(definition);
  await queue.upsertJobScheduler(
    name,
    { pattern: cron, ...(tz === undefined ? {} : { tz }) },
    {
      name: EXPORT_JOB_NAME,
      data: { request, schedule: keep === undefined ? { name } : { name, keep } },
      opts: exportJobOptions(jobTtlSeconds),
    },
  );
  const info = await getSchedule(queue, name);
  return info ?? { name, cron, tz, request, keep };
}

/** The schedule, or undefined. */
export async function getSchedule(
  queue: Queue<ExportJobData>,
  name: string,
): Promise<ScheduleInfo | undefined> {
  if (!SCHEDULE_NAME_PATTERN.test(name)) return undefined;
  const scheduler = await queue.getJobScheduler(name);
  return scheduler ? toInfo(scheduler) : undefined;
}

/** Every export schedule, soonest first. */
export async function listSchedules(queue: Queue<ExportJobData>): Promise<ScheduleInfo[]> {
  const schedulers = await queue.getJobSchedulers(0, -1, true);
  return schedulers.map(toInfo).filter((info): info is ScheduleInfo => info !== undefined);
}

/** Removes the schedule (its waiting next run too); false when there was none. */
export async function removeSchedule(queue: Queue<ExportJobData>, name: string): Promise<boolean> {
  if (!SCHEDULE_NAME_PATTERN.test(name)) return false;
  return queue.removeJobScheduler(name);
}
