/** What the span of a batch job says: which batch and attempt, and what the batch did. */
import type { Job } from 'bullmq';
import type { BatchReport } from '../execute/run-batch.js';
import type { SpanOptions } from '../observability/tracing.js';
import type { ImportBatchJobData } from './import-queue.js';

export function batchSpanAttributes(job: Job<ImportBatchJobData>): SpanOptions {
  return {
    attributes: {
      'porter.batch.index': job.data.batchIndex,
      'porter.batch.start': job.data.start,
      'porter.records': job.data.count,
      'porter.batch.attempt': job.attemptsMade + 1,
      'porter.batch.taken_over': job.stalledCounter > 0,
    },
  };
}

export function batchSpanResult(report: BatchReport): Record<string, string | number | boolean> {
  return {
    ...(report.resource ? { 'porter.resource': report.resource } : {}),
    'porter.batch.already_done': report.alreadyDone,
    'porter.batch.succeeded': report.counts.succeeded,
    'porter.batch.failed': report.counts.failed,
    'porter.batch.skipped': report.counts.skipped,
    'porter.batch.unprocessed': report.counts.unprocessed,
    'porter.batch.planned': report.counts.planned,
    'porter.batch.write_calls': report.writeCalls,
    'porter.batch.lookup_reads': report.lookupReads,
    'porter.batch.retries': report.retries,
    'porter.batch.splits': report.splits,
    'porter.batch.paused': report.paused === true,
  };
}
