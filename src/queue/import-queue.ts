/**
 * The BullMQ queue of import batches: one job per batch (one or several calls' worth of records),
 * named by import and batch index.
 */
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { BatchRef } from '../execute/run-batch.js';
import { queuePrefix } from '../redis/key-tags.js';
import { queueTelemetry, withWork } from '../observability/tracing.js';

export const IMPORT_QUEUE = 'import-batches';

export type ImportBatchJobData = BatchRef;

/** The one job an import starts with: decide how to look records up, snapshot, queue the batches. */
export interface PrepareJobData {
  kind: 'prepare';
  importId: string;
}

/** What the import queue carries: batches, and each import's preparation. */
export type ImportJobData = ImportBatchJobData | PrepareJobData;

export function isPrepareJob(data: ImportJobData): data is PrepareJobData {
  return (data as PrepareJobData).kind === 'prepare';
}

/** The job id of an import's preparation. */
export function prepareJobId(importId: string): string {
  return `${importId}-prepare`;
}

export interface ImportQueueOptions {
  connection: ConnectionOptions;
  /** Key prefix shared by every porter key. */
  prefix: string;
  /** Attempts of a batch job that fails outside the admin server (Redis, crash). @defaultValue 3 */
  jobAttempts?: number;
  /** Seconds failed jobs stay for inspection. @defaultValue 7 days */
  failedJobTtlSeconds?: number;
}

export function createImportQueue(options: ImportQueueOptions): Queue<ImportJobData> {
  const defaultJobOptions: JobsOptions = {
    attempts: options.jobAttempts ?? 3,
    backoff: { type: 'exponential', delay: 1_000 },
    removeOnComplete: true,
    removeOnFail: { age: options.failedJobTtlSeconds ?? 7 * 24 * 3600 },
  };
  return new Queue<ImportJobData>(IMPORT_QUEUE, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, IMPORT_QUEUE),
    defaultJobOptions,
    // when tracing: each job carries its trace, and the import's id, to the worker that takes it
    telemetry: queueTelemetry(),
  });
}

/** The job id of a batch: adding the same batch twice is a no-op while the job exists. */
export function batchJobId(importId: string, batchIndex: number): string {
  return `${importId}-b${batchIndex}`;
}

/** Calls' worth of records (`batchSize` each) one batch job carries at most. */
export const CALLS_PER_JOB = 4;

/**
 * Jobs an import keeps at least before a job carries more than one call's worth: the jobs of a
 * small import stay many, so they spread over every call in flight and every worker.
 */
export const JOBS_BEFORE_LARGER = 200;

/**
 * Records one batch job carries: `batchSize` (one call's worth), or several calls' worth for a
 * large import. What BullMQ, the batch's reads and its result writes cost per job is then paid
 * once for several calls (its calls still carry `batchSize` records each, one after the other).
 * A pure function of the two counts: every process finds the same jobs for the same import.
 */
export function recordsPerJob(stagedCount: number, batchSize: number): number {
  const calls = Math.ceil(stagedCount / batchSize);
  const perJob = Math.floor(calls / JOBS_BEFORE_LARGER);
  return batchSize * Math.max(1, Math.min(CALLS_PER_JOB, perJob));
}

/** Splits `stagedCount` staged records into batch refs of recordsPerJob records. */
export function* batchRefs(
  importId: string,
  stagedCount: number,
  batchSize: number,
): Generator<BatchRef> {
  const size = recordsPerJob(stagedCount, batchSize);
  for (let batchIndex = 0, start = 0; start < stagedCount; batchIndex++, start += size) {
    yield { importId, batchIndex, start, count: Math.min(size, stagedCount - start) };
  }
}

/**
 * How a streamed import is cut into batch jobs. Its total is not known while they are queued,
 * so their size cannot depend on it as recordsPerJob's does: its first JOBS_BEFORE_LARGER jobs
 * carry one call's worth each (`small`), so a small stream spreads over every worker at once, and
 * the jobs after them CALLS_PER_JOB calls' worth (`large`), as a large import's do.
 */
export function streamJobs(batchSize: number): { small: number; smallUpTo: number; large: number } {
  return {
    small: batchSize,
    smallUpTo: batchSize * JOBS_BEFORE_LARGER,
    large: batchSize * CALLS_PER_JOB,
  };
}

/** The records of a streamed import's whole jobs among its first `staged` (a job boundary). */
export function streamBoundary(staged: number, batchSize: number): number {
  const { small, smallUpTo, large } = streamJobs(batchSize);
  if (staged < smallUpTo) return Math.floor(staged / small) * small;
  return smallUpTo + Math.floor((staged - smallUpTo) / large) * large;
}

/** How many batch jobs a streamed import of `staged` records has. */
export function streamJobCount(staged: number, batchSize: number): number {
  const { small, smallUpTo, large } = streamJobs(batchSize);
  if (staged <= smallUpTo) return Math.ceil(staged / small);
  return JOBS_BEFORE_LARGER + Math.ceil((staged - smallUpTo) / large);
}

/** The batch refs of a streamed import's staged records [from, to), `from` on a job boundary. */
export function* streamBatchRefs(
  importId: string,
  from: number,
  to: number,
  batchSize: number,
): Generator<BatchRef> {
  const { small, smallUpTo, large } = streamJobs(batchSize);
  for (let start = from; start < to;) {
    const size = start < smallUpTo ? small : large;
    const batchIndex =
      start < smallUpTo ? start / small : JOBS_BEFORE_LARGER + (start - smallUpTo) / large;
    yield { importId, batchIndex, start, count: Math.min(size, to - start) };
    start += size;
  }
}

/** Every batch ref of an import whose `stagedCount` records are staged, streamed or not. */
export function importBatchRefs(
  importId: string,
  stagedCount: number,
  options: { batchSize: number; stream?: boolean },
): Generator<BatchRef> {
  return options.stream === true
    ? streamBatchRefs(importId, 0, stagedCount, options.batchSize)
    : batchRefs(importId, stagedCount, options.batchSize);
}

/** Queues an import's preparation; adding it twice is a no-op while the job exists. */
export async function enqueuePrepare(
  queue: Queue<ImportJobData>,
  importId: string,
  target?: string,
): Promise<void> {
  await withWork({ importId, target }, () =>
    queue.add('prepare', { kind: 'prepare', importId }, { jobId: prepareJobId(importId) }),
  );
}

/** Adds the batches of an import to the queue, a thousand jobs per round trip. */
export async function enqueueBatches(
  queue: Queue<ImportJobData>,
  refs: Iterable<BatchRef>,
): Promise<number> {
  let chunk: BatchRef[] = [];
  let added = 0;
  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    const jobs = chunk.map((ref) => ({
      name: 'batch',
      data: ref,
      opts: { jobId: batchJobId(ref.importId, ref.batchIndex) },
    }));
    // the refs of one call are one import's
    await withWork({ importId: chunk[0]!.importId }, () => queue.addBulk(jobs));
    added += chunk.length;
    chunk = [];
  };
  for (const ref of refs) {
    chunk.push(ref);
    if (chunk.length >= 1000) await flush();
  }
  await flush();
  return added;
}
