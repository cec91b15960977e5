/**
 * The BullMQ adapter of an export: takes a job, creates the run's state when a schedule made
 * the job, runs the core `executeExport`, and fails the job (without retry; reads were retried
 * inside) when the export failed. A run interrupted by a stopping worker goes back to the
 * queue. A job that fails without the run finishing (BullMQ fails a job whose workers died on
 * it too often, without running it again) has its run marked failed, so it never stays
 * `running`. A schedule is untouched by a failed run: BullMQ made its next job when this one
 * started.
 */
import { UnrecoverableError, WaitingError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { executeExport, type ExecuteExportDeps } from '../export/execute-export.js';
import { scheduledExportId } from '../export/export-id.js';
import { runDirectory } from '../export/export-plan.js';
import { removeRunFiles } from '../export/export-run.js';
import type { ExportStore } from '../export/export-store.js';
import { FINAL_EXPORT_STATES, type ExportInfo } from '../export/export-types.js';
import { EXPORT_QUEUE, type ExportJobData } from './export-queue.js';
import { queueErrorListener } from '../redis/outage-log.js';
import { queuePrefix } from '../redis/key-tags.js';
import { queueTelemetry, withSpan, withWork } from '../observability/tracing.js';

export interface ExportJobResult {
  exportId: string;
  written: number;
}

export interface ExportWorkerOptions {
  connection: ConnectionOptions;
  prefix: string;
  /** Exports one process runs at once. @defaultValue 1 */
  concurrency?: number;
  /**
   * How long a job's lock lasts without renewal; a worker that dies has its run taken over
   * once the lock lapses. @defaultValue 30000
   */
  lockDurationMs?: number;
  /** How often stalled jobs are looked for. @defaultValue lockDurationMs */
  stalledIntervalMs?: number;
  deps: Omit<ExecuteExportDeps, 'signal' | 'logger'>;
  logger: Logger;
  /** Told of a run that ended, completed or failed (notifications). */
  onEnd?(info: ExportInfo): void;
}

/** The time a scheduled job was due: from its id `repeat:<scheduler>:<millis>`. */
function scheduledAt(job: Job<ExportJobData>): number {
  const match = /:(\d+)$/.exec(job.id ?? '');
  return match ? Number(match[1]) : job.timestamp;
}

/** The export id a job runs: its own (ad hoc), or derived from its due time (scheduled). */
export function exportIdOfJob(job: Job<ExportJobData>): string | undefined {
  const { exportId, schedule } = job.data;
  if (exportId !== undefined) return exportId;
  if (!schedule) return undefined;
  return scheduledExportId(scheduledAt(job), job.id ?? String(job.timestamp));
}

/** The export id of a job, creating the state of a scheduled run the first time. */
async function exportIdOf(job: Job<ExportJobData>, store: ExportStore): Promise<string> {
  const { exportId, request, schedule } = job.data;
  if (exportId !== undefined) return exportId;
  const id = exportIdOfJob(job);
  if (!schedule || id === undefined) {
    throw new UnrecoverableError('export job without export id or schedule');
  }
  await store.create({
    id,
    request,
    dir: runDirectory(request.outDir, id, schedule.name),
    schedule,
  });
  return id;
}

/**
 * Records the failure of a job whose run did not end by itself (its job failed as stalled,
 * say): removes what the run's attempts left in its directory (on a worker, which sees that
 * directory) and marks it failed with the reason. A run that already ended (completed, or
 * failed by the worker) is left as it is. True when the run was marked failed.
 */
export async function recordFailedExportJob(
  store: ExportStore,
  job: Job<ExportJobData>,
  reason: string,
  options: { removeFiles?: boolean } = {},
): Promise<boolean> {
  const exportId = exportIdOfJob(job);
  if (exportId === undefined) return false;
  const info = await store.get(exportId);
  if (!info || FINAL_EXPORT_STATES.has(info.state)) return false;
  if ((options.removeFiles ?? true) && info.dir !== '') {
    await removeRunFiles(info.dir, info.request);
  }
  return store.failUnlessFinal(exportId, `the export job failed before the run ended: ${reason}`);
}

/** Starts a worker on the export queue. */
export function createExportWorker(
  options: ExportWorkerOptions,
): Worker<ExportJobData, ExportJobResult> {
  const { logger } = options;
  const processor = async (
    job: Job<ExportJobData, ExportJobResult>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<ExportJobResult> => {
    const exportId = await exportIdOf(job, options.deps.store);
    const work = { exportId, target: job.data.request.target };
    const info = await withWork(work, () =>
      withSpan('porter.export.run', {}, async (span) => {
        const run = await executeExport(exportId, {
          ...options.deps,
          signal,
          logger: logger.child({ jobId: job.id }),
        });
        span.setAttributes({ 'porter.export.state': run.state, 'porter.records': run.written });
        return run;
      }),
    );
    if (info.state === 'queued' && token !== undefined) {
      // interrupted by a stopping worker: back to the queue for another one
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (info.state === 'completed' || info.state === 'failed') options.onEnd?.(info);
    if (info.state === 'failed') throw new UnrecoverableError(info.reason ?? 'export failed');
    return { exportId, written: info.written };
  };
  const lockDuration = options.lockDurationMs ?? 30_000;
  const worker = new Worker<ExportJobData, ExportJobResult>(EXPORT_QUEUE, processor, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, EXPORT_QUEUE),
    concurrency: options.concurrency ?? 1,
    lockDuration,
    stalledInterval: options.stalledIntervalMs ?? lockDuration,
    telemetry: queueTelemetry(),
  });
  // a job BullMQ fails without running it (its workers died on it more than once) would leave
  // its run `running` for ever: say it failed, and why
  worker.on('failed', (job, error) => {
    if (!job) return;
    recordFailedExportJob(options.deps.store, job, error.message).then(
      (marked) => {
        if (marked) {
          logger.error({ err: error, jobId: job.id }, 'export job failed before its run ended');
        }
      },
      (recordError: unknown) =>
        logger.error({ err: recordError, jobId: job.id }, 'could not record a failed export job'),
    );
  });
  worker.on('error', queueErrorListener(logger, 'export worker'));
  return worker;
}
