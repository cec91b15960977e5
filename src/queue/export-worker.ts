/**
 * The BullMQ adapter of an export: takes a job, creates the run's state when a schedule made
 * the job, runs the core `executeExport`, and fails the job (without retry; reads were retried
 * inside) when the export failed. A run interrupted by a stopping worker goes back to the
 * queue. A schedule is untouched by a failed run: BullMQ made its next job when this one started.
 */
import { UnrecoverableError, WaitingError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { executeExport, type ExecuteExportDeps } from '../export/execute-export.js';
import { scheduledExportId } from '../export/export-id.js';
import { runDirectory } from '../export/export-plan.js';
import type { ExportStore } from '../export/export-store.js';
import { EXPORT_QUEUE, type ExportJobData } from './export-queue.js';

export interface ExportJobResult {
  exportId: string;
  written: number;
}

export interface ExportWorkerOptions {
  connection: ConnectionOptions;
  prefix: string;
  /** Exports one process runs at once. @defaultValue 1 */
  concurrency?: number;
  /** How long a job's lock lasts without renewal. @defaultValue 30000 */
  lockDurationMs?: number;
  deps: Omit<ExecuteExportDeps, 'signal' | 'logger'>;
  logger: Logger;
}

/** The time a scheduled job was due: from its id `repeat:<scheduler>:<millis>`. */
function scheduledAt(job: Job<ExportJobData>): number {
  const match = /:(\d+)$/.exec(job.id ?? '');
  return match ? Number(match[1]) : job.timestamp;
}

/** The export id of a job, creating the state of a scheduled run the first time. */
async function exportIdOf(job: Job<ExportJobData>, store: ExportStore): Promise<string> {
  const { exportId, request, schedule } = job.data;
  if (exportId !== undefined) return exportId;
  if (!schedule) throw new UnrecoverableError('export job without export id or schedule');
  const id = scheduledExportId(scheduledAt(job), job.id ?? String(job.timestamp));
  await store.create({
    id,
    request,
    dir: runDirectory(request.outDir, id, schedule.name),
    schedule,
  });
  return id;
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
    const info = await executeExport(exportId, {
      ...options.deps,
      signal,
      logger: logger.child({ jobId: job.id }),
    });
    if (info.state === 'queued' && token !== undefined) {
      // interrupted by a stopping worker: back to the queue for another one
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (info.state === 'failed') throw new UnrecoverableError(info.reason ?? 'export failed');
    return { exportId, written: info.written };
  };
  const worker = new Worker<ExportJobData, ExportJobResult>(EXPORT_QUEUE, processor, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency ?? 1,
    lockDuration: options.lockDurationMs ?? 30_000,
  });
  worker.on('error', (error) => logger.error({ err: error }, 'export worker error'));
  return worker;
}
