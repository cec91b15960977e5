import { setMaxListeners } from 'node:events';
/**
 * The BullMQ adapter of a batch: takes a job, runs the core `runBatch`, and when a job
 * is given up (attempts spent) reports its rows `unprocessed` so the import never hangs.
 */
import { DelayedError, Worker, type ConnectionOptions, type Job, type Queue } from 'bullmq';
import { watchLocks } from './lock-watch.js';
import type { Logger } from 'pino';
import { sleep } from '../execute/retry-policy.js';
import { describeAdminFailure, targetDownError } from '../admin/errors.js';
import { runBatch, type BatchReport, type UnboundBatchDeps } from '../execute/run-batch.js';
import {
  enqueueBatches,
  IMPORT_QUEUE,
  isPrepareJob,
  type ImportBatchJobData,
  type ImportJobData,
  type PrepareJobData,
} from './import-queue.js';
import { WORKING_IMPORT_STATES } from '../model/import.js';
import type { UnboundPrepareDeps } from '../snapshot/prepare-deps.js';
import { LookalikeReadError, prepareImport } from '../snapshot/prepare-import.js';
import { SharedSnapshotReads } from '../snapshot/shared-reads.js';
import { abandonBatch } from '../execute/abandon-batch.js';
import { CANCELLED_REASON, dropPendingBatches, promoteDelayedBatches } from './pending-batches.js';
import { NOOP_METRICS, type BatchOutcome } from '../metrics/metrics.js';
import { queueErrorListener } from '../redis/outage-log.js';
import { waitOutRedis } from '../redis/wait-out.js';
import { untilRoom, type RoomWatch } from '../redis/redis-full.js';
import { queuePrefix } from '../redis/key-tags.js';
import { queueTelemetry, withSpan, withWork } from '../observability/tracing.js';
import { batchSpanAttributes, batchSpanResult } from './batch-span.js';

export interface ImportWorkerOptions {
  connection: ConnectionOptions;
  prefix: string;
  /** Batches one worker process runs at once. @defaultValue 4 */
  concurrency?: number;
  /**
   * How long a job's lock lasts without renewal. A worker renews it every half period
   * while alive; a worker that dies (SIGKILL) stops renewing, and the job is taken over
   * once the lock expires and the stalled check runs. @defaultValue 30000
   */
  lockDurationMs?: number;
  /** How often stalled jobs are looked for. @defaultValue lockDurationMs */
  stalledIntervalMs?: number;
  /**
   * What a batch needs; `bindTarget` gives each import its own target's client, whose 429
   * back-off holds every worker's calls to that target (and only to that target).
   */
  deps: Omit<UnboundBatchDeps, 'signal'>;
  queue: Queue<ImportJobData>;
  logger: Logger;
  /** What an import's preparation needs besides the batch deps. */
  prepare: Pick<UnboundPrepareDeps, 'redis' | 'store'>;
  /**
   * Where a full Redis is told: a batch or preparation whose write Redis refuses for want of
   * memory waits for room and runs again, without spending a try. Unset: it fails as any error.
   */
  room?: RoomWatch;
}

/** The reason `cancelAllJobs` gives when a worker's shutdown timeout cuts its batches short. */
export const SHUTDOWN_REASON = 'shutdown timeout';

/** Some failures BullMQ reports are not Error objects (an abort reason, for one). */
function describeError(error: unknown): string {
  if (error instanceof Error && error.message) return describeAdminFailure(error);
  return typeof error === 'string' && error ? error : 'the batch job failed';
}

/** The import and batch a batch job id names (`<importId>-b<batchIndex>`), when it is one. */
function batchOfJobId(jobId: string): { importId?: string; batchIndex?: number } {
  const match = /^(.+)-b(\d+)$/.exec(jobId);
  return match ? { importId: match[1], batchIndex: Number(match[2]) } : {};
}

/** Why rows of a given-up batch or preparation were not sent, with its code. */
function abandonedReason(error: unknown): { errorCode: string; error: string } {
  const down = targetDownError(error);
  if (down) {
    return { errorCode: 'PORTER_TARGET_UNREACHABLE', error: `not sent: ${describeError(down)}` };
  }
  return { errorCode: 'PORTER_BATCH_ABANDONED', error: `not sent: ${describeError(error)}` };
}

/** Starts a worker on the import queue. */
export function createImportWorker(
  options: ImportWorkerOptions,
): Worker<ImportJobData, BatchReport | undefined> {
  const { logger, queue } = options;
  const lockDuration = options.lockDurationMs ?? 30_000;
  /**
   * A batch or preparation given up because the target cannot be reached or refuses porter's
   * credentials: when no record of the import was sent, the import ends `failed` with that
   * reason (PORTER_TARGET_UNREACHABLE), and its other batches are not tried.
   */
  const endIfNothingSent = async (importId: string, error: unknown): Promise<void> => {
    const down = targetDownError(error);
    if (!down) return;
    const reason = abandonedReason(down);
    const ended = await options.deps.store.failUnsent(
      importId,
      `nothing sent: ${describeError(down)}`,
      'PORTER_TARGET_UNREACHABLE',
    );
    if (!ended) return;
    logger.warn({ importId, reason: reason.error }, 'import failed: nothing could be sent');
    await dropPendingBatches(queue, options.deps, importId, reason);
  };
  // the imports of a target this worker prepares at the same time read its directory once
  const snapshotReads = new SharedSnapshotReads();
  /** Runs the work again once Redis has room, as long as it refuses writes for want of memory. */
  const withRoom = <T>(importId: string, work: () => Promise<T>, signal?: AbortSignal) =>
    untilRoom(work, {
      room: options.room,
      probe: () => options.prepare.store.probeRoom(importId),
      signal,
    });
  const prepare = (job: Job<PrepareJobData>, signal?: AbortSignal): Promise<undefined> =>
    withSpan('porter.import.prepare', {}, async (span) => {
      // prepared and its batches queued, or run again: a preparation that ran to its end finds
      // it did, and queues the same batches (their job ids are the batches'); a Redis that cannot
      // serve now (away, a slot in migration) is waited out, and so is a full one
      const { importId } = job.data;
      const run = () =>
        prepareImport(importId, {
          ...options.prepare,
          bindTarget: options.deps.bindTarget,
          retry: options.deps.retry,
          signal,
          snapshotReads,
          onResumed: (resumedId) => {
            const { onBreaker, store } = options.deps;
            if (!onBreaker) return;
            void store.get(resumedId).then(
              (info) => info && onBreaker('resumed', info),
              () => {},
            );
          },
        });
      const refs = await waitOutRedis(
        async () => {
          const prepared = await withRoom(importId, run, signal);
          if (prepared.length > 0) {
            await withRoom(importId, () => enqueueBatches(queue, prepared), signal);
          }
          return prepared;
        },
        {
          signal,
          onWait: (error) =>
            logger.warn(
              { importId, reason: describeError(error) },
              'Redis cannot serve the import preparation now; it waits and runs again',
            ),
        },
      );
      span.setAttribute('porter.batches', refs.length);
      return undefined;
    });
  // every span of a job carries its import's id, whether or not its producer traced
  const processor = (
    job: Job<ImportJobData, BatchReport | undefined>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<BatchReport | undefined> =>
    withWork({ importId: job.data.importId }, () => processJob(job, token, signal));
  const processJob = async (
    job: Job<ImportJobData, BatchReport | undefined>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<BatchReport | undefined> => {
    if (!isPrepareJob(job.data)) {
      return processBatch(job as Job<ImportBatchJobData, BatchReport>, token, signal);
    }
    try {
      return await prepare(job as Job<PrepareJobData>, signal);
    } catch (error) {
      if (error instanceof LookalikeReadError && token !== undefined) {
        // the server cannot be read yet: the import waits, paused, and its preparation comes
        // back after the cool-down (a probe), or at once on porter resume
        const { importId } = job.data;
        const { store, health, breaker } = options.deps;
        if (await store.pause(importId, error.message, Date.now())) {
          await health.holdProbes(importId, breaker.cooldownMs);
          logger.warn({ importId, reason: error.message }, 'import paused before its first batch');
          const info = options.deps.onBreaker ? await store.get(importId) : undefined;
          if (info) options.deps.onBreaker?.('paused', info, error.message);
        }
        await job.moveToDelayed(Date.now() + breaker.cooldownMs, token);
        throw new DelayedError();
      }
      if (signal?.aborted && signal.reason === SHUTDOWN_REASON) {
        // as for a batch: a shutdown is no fault of the preparation, which starts over elsewhere
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      throw error;
    }
  };
  const metrics = options.deps.metrics ?? NOOP_METRICS;
  /** Runs a batch job and tells the metrics how it ended and how long it took. */
  const processBatch = async (
    job: Job<ImportBatchJobData, BatchReport>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<BatchReport> => {
    const startedAt = performance.now();
    if (job.stalledCounter > 0) {
      logger.warn(
        {
          importId: job.data.importId,
          batchIndex: job.data.batchIndex,
          stalledCount: job.stalledCounter,
        },
        'taking over a batch another worker lost (its lock lapsed); rows it sent are checked before they are sent again',
      );
    }
    const seen: { report?: BatchReport } = {};
    let outcome: BatchOutcome = 'failed';
    try {
      const report = await runBatchJob(job, seen, token, signal);
      outcome = 'done';
      return report;
    } catch (error) {
      if (error instanceof DelayedError) outcome = seen.report?.paused ? 'paused' : 'interrupted';
      throw error;
    } finally {
      const { report } = seen;
      metrics.batch(
        outcome,
        performance.now() - startedAt,
        report && {
          resource: report.resource,
          retries: report.retries,
          splits: report.splits,
          reconcileReads: report.reconcileReads,
        },
      );
    }
  };
  const runBatchJob = async (
    job: Job<ImportBatchJobData, BatchReport>,
    seen: { report?: BatchReport },
    token?: string,
    signal?: AbortSignal,
  ): Promise<BatchReport> => {
    const log = logger.child({
      importId: job.data.importId,
      batchIndex: job.data.batchIndex,
      jobId: job.id,
    });
    // every lookup and call of the batch listens to the one signal
    if (signal) setMaxListeners(0, signal);
    let report: BatchReport;
    try {
      report = await withSpan('porter.import.batch', batchSpanAttributes(job), async (span) => {
        // a Redis that cannot serve now (away, a slot in migration) costs the batch no attempt,
        // nor does a full one: the batch runs again once it has room (its send journal and
        // recorded results make that safe)
        const done = await waitOutRedis(
          () =>
            withRoom(
              job.data.importId,
              () => runBatch(job.data, { ...options.deps, signal }),
              signal,
            ),
          {
            signal,
            onWait: (error) =>
              log.warn(
                { reason: describeError(error) },
                'Redis cannot serve the batch now (away, or a slot in migration); it waits and runs again',
              ),
            onServed: (runs) => log.info({ runs }, 'Redis serves the batch again'),
          },
        );
        span.setAttributes(batchSpanResult(done));
        return done;
      });
    } catch (error) {
      if (signal?.aborted && signal.reason === SHUTDOWN_REASON) {
        // a worker shutting down is no fault of the batch: it goes back to the queue without
        // spending one of its attempts, and the send journal guards what it had sent
        log.info('batch cut short by the shutdown timeout; back to the queue');
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      if (!signal?.aborted && job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        // the last attempt failed: its rows get their results before the job is failed, so a
        // worker that stops right after cannot leave the import unsettled
        await endIfNothingSent(job.data.importId, error);
        await abandonBatch(job.data, abandonedReason(error), options.deps);
      }
      throw error;
    }
    seen.report = report;
    log.debug({ report }, 'batch done');
    if (report.resumedImport) {
      log.info('the admin server answers again: import resumed');
      await promoteDelayedBatches(queue, options.deps.store, job.data.importId);
    }
    if (report.paused) {
      // the import is paused: this batch comes back after the cool-down, as a probe or to wait again
      await job.moveToDelayed(Date.now() + options.deps.breaker.cooldownMs, token);
      await recheckWaitingBatch(job, queue, options.deps);
      throw new DelayedError();
    }
    if (report.stoppedImport) {
      const { reason, code } = report.stoppedImport;
      log.warn({ reason, code }, 'import stopped');
      await dropPendingBatches(queue, options.deps, job.data.importId, {
        errorCode: code,
        error: `not sent: ${reason}`,
      });
    }
    return report;
  };
  const worker = new Worker<ImportJobData, BatchReport | undefined>(IMPORT_QUEUE, processor, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, IMPORT_QUEUE),
    concurrency: options.concurrency ?? 4,
    lockDuration,
    // a lapsed lock is found within half a lock period: a lost worker's batch is back in the
    // queue within one and a half lock periods of its last renewal
    stalledInterval: options.stalledIntervalMs ?? Math.max(1, Math.round(lockDuration / 2)),
    // a batch whose worker keeps dying is tried this often before its rows are given up
    maxStalledCount: 5,
    // when tracing: each job's run joins the trace its producer started
    telemetry: queueTelemetry(),
  });
  // this worker's stalled check found a batch whose worker stopped renewing its lock
  worker.on('stalled', (jobId) => {
    logger.warn(
      { jobId, ...batchOfJobId(jobId) },
      'batch left by a worker that stopped renewing its lock; back in the queue to be taken over',
    );
  });
  // a worker that lost a batch's lock (Redis unreachable longer than the lock) stops that
  // batch: another worker may already be running it
  // said once per batch: by the watch when the lock lapses unrenewed while Redis cannot be
  // reached, or by Redis's answer to a renewal
  const lockWatch = watchLocks(worker, {
    lockDurationMs: lockDuration,
    onLapsed: (jobIds) => {
      for (const jobId of jobIds) worker.cancelJob(jobId, 'lock lost');
      logger.warn(
        { jobIds, batches: jobIds.map(batchOfJobId) },
        `lost the lock of running batches: not renewed for a lock period (${options.room?.full ? 'Redis is full: it refuses renewals' : 'Redis unreachable'}), so another worker may take them over; stopped them`,
      );
    },
  });
  worker.on('closed', () => lockWatch.close());
  worker.on('lockRenewalFailed', (failed) => {
    const jobIds = failed.filter((jobId) => !lockWatch.said(jobId));
    for (const jobId of jobIds) worker.cancelJob(jobId, 'lock lost');
    if (jobIds.length === 0) return;
    logger.warn(
      { jobIds, batches: jobIds.map(batchOfJobId) },
      'lost the lock of running batches (another worker may have taken them over); stopped them',
    );
  });
  worker.on('failed', (anyJob, error) => {
    if (!anyJob) return;
    const attempts = anyJob.opts.attempts ?? 1;
    if (isPrepareJob(anyJob.data)) {
      const { importId } = anyJob.data;
      if (anyJob.attemptsMade < attempts && !/stalled/i.test(describeError(error))) return;
      logger.error(
        { err: error, importId },
        'import preparation given up; its rows are unprocessed',
      );
      void recordUntilDone(
        async () => {
          const { store } = options.deps;
          await endIfNothingSent(importId, error);
          // a sync learns its whole total when prepared: given up, it ends failed, or it would
          // wait for that total forever; a streamed import (prepared as its upload starts) ends
          // failed too: no batch of it could be queued
          const given = (await store.get(importId))?.options;
          if (given?.mode === 'sync') {
            const reason = `sync aborted, nothing written: ${describeError(error)}`;
            await store.transition(importId, ['queued', 'running', 'paused'], 'failed', reason);
          } else if (given?.stream === true) {
            const reason = `not prepared: ${describeError(error)}`;
            await store.transition(importId, WORKING_IMPORT_STATES, 'failed', reason);
          }
          await store.recordUnprocessed(importId, abandonedReason(error));
        },
        (attempt, abandonError) =>
          logger.error(
            { err: abandonError, attempt },
            'could not yet record the rows of an import',
          ),
      );
      return;
    }
    const job = anyJob as Job<ImportBatchJobData, BatchReport | undefined>;
    const log = logger.child({ importId: job.data.importId, batchIndex: job.data.batchIndex });
    if (job.attemptsMade < attempts && !/stalled/i.test(describeError(error))) {
      log.warn({ err: error, attemptsMade: job.attemptsMade }, 'batch failed; it will be retried');
      return;
    }
    log.error({ err: error }, 'batch given up; its rows are reported unprocessed');
    // rows of a job failed by the stalled check never reached the processor's last attempt;
    // for the others this finds every row already recorded
    void recordUntilDone(
      () => abandonBatch(job.data, abandonedReason(error), options.deps),
      (attempt, abandonError) =>
        log.error(
          { err: abandonError, attempt },
          'could not yet record the rows of a given-up batch',
        ),
    );
  });
  worker.on('error', queueErrorListener(logger, 'import worker', 'error', options.room));
  return worker;
}

/**
 * A batch that chose to wait out a pause may have missed a cancel or a resume that came while
 * it was running (a cancel skips a batch in hand; a resume promotes only waiting ones): it is
 * then dropped, or run at once, instead of sitting out a whole cool-down.
 */
async function recheckWaitingBatch(
  job: Job<ImportBatchJobData, BatchReport>,
  queue: Queue<ImportJobData>,
  deps: ImportWorkerOptions['deps'],
): Promise<void> {
  const state = (await deps.store.get(job.data.importId))?.state;
  if (state === 'cancelled') {
    await dropPendingBatches(queue, deps, job.data.importId, CANCELLED_REASON);
  } else if (state === 'running') {
    await job.promote().catch(() => {}); // already taken or promoted: nothing to do
  }
}

/**
 * Keeps trying to record a given-up batch's rows (Redis may be away for a while): a batch with
 * no job left and rows without results would keep its import from ever settling.
 */
async function recordUntilDone(
  record: () => Promise<void>,
  onError: (attempt: number, error: unknown) => void,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await record();
      return;
    } catch (error) {
      onError(attempt, error);
      await sleep(Math.min(60_000, 500 * 2 ** Math.min(attempt, 7)));
    }
  }
}
