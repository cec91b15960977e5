/**
 * The BullMQ adapter of import schedules: each job a scheduler makes is one run, handed to the
 * core `runScheduledImport` through `run`. A run that could not start its import fails its job
 * without retry (the next time of the schedule tries again); the schedule itself goes on.
 */
import { UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { ScheduleRun } from '../imports/schedule-history.js';
import { IMPORT_SCHEDULE_QUEUE, type ImportScheduleJobData } from './import-schedules.js';
import { queueErrorListener } from '../redis/outage-log.js';
import { queuePrefix } from '../redis/key-tags.js';

export interface ImportScheduleWorkerOptions {
  connection: ConnectionOptions;
  prefix: string;
  /** @defaultValue 30000 */
  lockDurationMs?: number;
  /** Runs one job: reads the file and starts its import. */
  run(data: ImportScheduleJobData, jobId: string | undefined): Promise<ScheduleRun>;
  logger: Logger;
}

/** Starts a worker on the import schedule queue (one run at a time). */
export function createImportScheduleWorker(
  options: ImportScheduleWorkerOptions,
): Worker<ImportScheduleJobData, ScheduleRun> {
  const { logger } = options;
  const processor = async (job: Job<ImportScheduleJobData, ScheduleRun>): Promise<ScheduleRun> => {
    const run = await options.run(job.data, job.id);
    const log = { schedule: job.data.schedule.name, jobId: job.id, ...run };
    if (run.outcome === 'failed') {
      logger.warn(log, 'scheduled import run failed');
      throw new UnrecoverableError(run.note ?? 'scheduled import failed');
    }
    logger.info(log, 'scheduled import run');
    return run;
  };
  const lockDuration = options.lockDurationMs ?? 30_000;
  const worker = new Worker<ImportScheduleJobData, ScheduleRun>(IMPORT_SCHEDULE_QUEUE, processor, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, IMPORT_SCHEDULE_QUEUE),
    concurrency: 1,
    lockDuration,
    stalledInterval: lockDuration,
  });
  worker.on('error', queueErrorListener(logger, 'import schedule worker'));
  return worker;
}
