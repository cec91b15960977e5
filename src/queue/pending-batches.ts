/** Drops the batches of an import still waiting in the queue, reporting their records unprocessed. */
import type { Queue } from 'bullmq';
import { abandonBatch } from '../execute/abandon-batch.js';
import type { BatchDeps, BatchRef, BatchStore } from '../execute/run-batch.js';
import {
  batchJobId,
  importBatchRefs,
  isPrepareJob,
  prepareJobId,
  type ImportJobData,
} from './import-queue.js';

/**
 * Removes every waiting or delayed batch job of the import and gives its rows an `unprocessed`
 * result with the reason. A job a worker holds is left alone: the worker checks the import's
 * state before each call. Returns the number of batches dropped.
 */
/** Why the records of a cancelled import's unsent batches were not sent. */
export const CANCELLED_REASON = {
  errorCode: 'PORTER_CANCELLED',
  error: 'not sent: the import was cancelled',
} as const;

export async function dropPendingBatches(
  queue: Queue<ImportJobData>,
  deps: Pick<BatchDeps, 'store' | 'journal' | 'metrics'>,
  importId: string,
  reason: { errorCode: string; error: string },
): Promise<number> {
  let dropped = 0;
  // an import not yet prepared has no batch jobs: its preparation goes, and every row is reported
  const prepare = await queue.getJob(prepareJobId(importId));
  if (prepare && !(await prepare.isActive())) {
    try {
      await prepare.remove();
      await deps.store.recordUnprocessed(importId, reason);
      dropped++;
    } catch {
      // taken by a worker meanwhile: it sees the state and reports the rows itself
    }
  }
  const refs = await batchesOf(deps.store, importId);
  for (const ref of refs) {
    const job = await queue.getJob(batchJobId(importId, ref.batchIndex));
    if (!job) continue;
    try {
      await job.remove();
    } catch {
      continue;
    }
    // the rows the job itself carries: those of `ref`, unless another version of porter cut
    // the import into jobs of another size
    await abandonBatch(isPrepareJob(job.data) ? ref : job.data, reason, deps);
    dropped++;
  }
  return dropped;
}

/** Runs the import's delayed batches now (after a resume), instead of at their delay's end. */
export async function promoteDelayedBatches(
  queue: Queue<ImportJobData>,
  store: BatchStore,
  importId: string,
): Promise<number> {
  let promoted = 0;
  // an import paused before its first batch waits in its preparation
  const prepare = await queue.getJob(prepareJobId(importId));
  if (prepare && (await prepare.isDelayed())) {
    await prepare.promote().then(
      () => promoted++,
      () => {}, // taken by a worker meanwhile
    );
  }
  for (const ref of await batchesOf(store, importId)) {
    const job = await queue.getJob(batchJobId(importId, ref.batchIndex));
    if (!job || !(await job.isDelayed())) continue;
    try {
      await job.promote();
      promoted++;
    } catch {
      // taken by a worker meanwhile
    }
  }
  return promoted;
}

/** The batch refs of an import, as they were queued. */
async function batchesOf(store: BatchStore, importId: string): Promise<BatchRef[]> {
  const info = await store.get(importId);
  if (!info) return [];
  return [...importBatchRefs(importId, await store.stagedCount(importId), info.options)];
}
