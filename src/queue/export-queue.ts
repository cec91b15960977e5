/** The BullMQ queue of exports: one job per run, ad hoc (job id = export id) or from a schedule. */
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { ExportRequest, ExportScheduleRef } from '../export/export-types.js';
import { queuePrefix } from '../redis/key-tags.js';
import { queueTelemetry, withWork } from '../observability/tracing.js';

export const EXPORT_QUEUE = 'exports';

/** Name of the jobs a schedule makes and of ad-hoc export jobs. */
export const EXPORT_JOB_NAME = 'export';

export interface ExportJobData {
  /** Set for ad-hoc exports, whose state is created when they are queued. */
  exportId?: string;
  request: ExportRequest;
  /** Set for runs made by a schedule; their state is created when they start. */
  schedule?: ExportScheduleRef;
}

export interface ExportQueueOptions {
  connection: ConnectionOptions;
  /** Key prefix shared by every porter key. */
  prefix: string;
  /** Seconds finished jobs stay for inspection. @defaultValue 7 days */
  jobTtlSeconds?: number;
}

/** Options of every export job: one attempt (reads retry inside the run), kept a while. */
export function exportJobOptions(jobTtlSeconds = 7 * 24 * 3600): JobsOptions {
  return {
    attempts: 1,
    removeOnComplete: { age: jobTtlSeconds },
    removeOnFail: { age: jobTtlSeconds },
  };
}

/** The export queue under the porter prefix. */
export function createExportQueue(options: ExportQueueOptions): Queue<ExportJobData> {
  return new Queue<ExportJobData>(EXPORT_QUEUE, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, EXPORT_QUEUE),
    defaultJobOptions: exportJobOptions(options.jobTtlSeconds),
    telemetry: queueTelemetry(),
  });
}

/** Queues an ad-hoc export whose state exists already; adding it twice is a no-op. */
export async function enqueueExport(
  queue: Queue<ExportJobData>,
  exportId: string,
  request: ExportRequest,
): Promise<void> {
  await withWork({ exportId, target: request.target }, () =>
    queue.add(EXPORT_JOB_NAME, { exportId, request }, { jobId: exportId }),
  );
}
