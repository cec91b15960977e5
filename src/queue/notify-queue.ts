/**
 * The BullMQ queue of notification deliveries: one job per event and channel, its id the
 * delivery id (so queuing twice is once, and the webhook-id stays the same on every attempt and
 * on a redelivery), retried with growing delays for the retry window (src/notify/retry-schedule.ts).
 */
import { Queue, type ConnectionOptions, type Job, type JobsOptions } from 'bullmq';
import type { DeliveryJob } from '../notify/notifier.js';
import type { NotifyEventName } from '../notify/notify-event.js';
import { queuePrefix } from '../redis/key-tags.js';
import { queueTelemetry } from '../observability/tracing.js';
import { PorterError } from '../errors/porter-error.js';

export const NOTIFY_QUEUE = 'notify';
export const DELIVERY_JOB_NAME = 'deliver';
/** The backoff the notify worker defines (src/queue/notify-worker.ts). */
export const NOTIFY_BACKOFF = 'notify';

export interface NotifyQueueOptions {
  connection: ConnectionOptions;
  prefix: string;
  /** Attempts of a delivery, the first included (retryAttempts of the schedule). */
  attempts: number;
  /** Seconds delivered and given-up deliveries stay listed. @defaultValue 7 days */
  jobTtlSeconds?: number;
}

export function deliveryJobOptions(attempts: number, jobTtlSeconds = 7 * 24 * 3600): JobsOptions {
  return {
    attempts,
    backoff: { type: NOTIFY_BACKOFF },
    removeOnComplete: { age: jobTtlSeconds },
    removeOnFail: { age: jobTtlSeconds },
  };
}

export function createNotifyQueue(options: NotifyQueueOptions): Queue<DeliveryJob> {
  return new Queue<DeliveryJob>(NOTIFY_QUEUE, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, NOTIFY_QUEUE),
    defaultJobOptions: deliveryJobOptions(options.attempts, options.jobTtlSeconds),
    telemetry: queueTelemetry(),
  });
}

/** Queues a delivery; one of the same id already there is left as it is. */
export async function enqueueDelivery(queue: Queue<DeliveryJob>, job: DeliveryJob): Promise<void> {
  await queue.add(DELIVERY_JOB_NAME, job, { jobId: job.id });
}

export type DeliveryState = 'waiting' | 'sending' | 'retrying' | 'delivered' | 'failed';

/** A delivery as `porter notify deliveries` and GET /v1/notify/deliveries show it. */
export interface DeliveryInfo {
  id: string;
  eventId: string;
  event: NotifyEventName;
  title: string;
  target?: string;
  channel: string;
  state: DeliveryState;
  /** Attempts made so far. */
  attempts: number;
  /** The last failed attempt's reason. */
  lastError?: string;
  createdAt: string;
  /** When it was delivered or given up. */
  finishedAt?: string;
}

const STATE_OF: Record<string, DeliveryState> = {
  waiting: 'waiting',
  prioritized: 'waiting',
  'waiting-children': 'waiting',
  active: 'sending',
  delayed: 'retrying',
  completed: 'delivered',
  failed: 'failed',
};

async function describe(job: Job<DeliveryJob>): Promise<DeliveryInfo> {
  const state = STATE_OF[await job.getState()] ?? 'waiting';
  const { event } = job.data;
  return {
    id: job.id!,
    eventId: event.id,
    event: event.name,
    title: event.title,
    ...(event.target ? { target: event.target } : {}),
    channel: job.data.channel,
    state,
    attempts: job.attemptsMade,
    ...(job.failedReason ? { lastError: job.failedReason } : {}),
    createdAt: new Date(job.timestamp).toISOString(),
    ...(job.finishedOn ? { finishedAt: new Date(job.finishedOn).toISOString() } : {}),
  };
}

/** Deliveries newest first; `failed`: those given up and those failing now (retrying). */
export async function listDeliveries(
  queue: Queue<DeliveryJob>,
  options: { failed?: boolean; limit?: number } = {},
): Promise<DeliveryInfo[]> {
  const limit = options.limit ?? 100;
  const states = options.failed
    ? (['failed', 'delayed'] as const)
    : (['active', 'waiting', 'prioritized', 'delayed', 'completed', 'failed'] as const);
  const jobs = (await queue.getJobs([...states], 0, limit - 1)).filter(
    (job): job is Job<DeliveryJob> => job !== undefined && job !== null,
  );
  const infos = await Promise.all(jobs.map(describe));
  return infos
    .filter((info) => !options.failed || info.state === 'failed' || info.lastError !== undefined)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.id.localeCompare(b.id))
    .slice(0, limit);
}

/** One delivery with the log of its attempts, or PORTER_NOT_FOUND. */
export async function describeDelivery(
  queue: Queue<DeliveryJob>,
  id: string,
): Promise<DeliveryInfo & { log: string[] }> {
  const job = await queue.getJob(id);
  if (!job)
    throw new PorterError('PORTER_NOT_FOUND', `no delivery ${id} (kept for the result TTL)`);
  const { logs } = await queue.getJobLogs(id, 0, 200, true);
  return { ...(await describe(job)), log: logs };
}

/**
 * Sends a delivered or given-up delivery again, as the same delivery (same webhook-id), with
 * all its attempts; one still waiting or retrying is PORTER_CONFLICT.
 */
export async function redeliver(queue: Queue<DeliveryJob>, id: string): Promise<DeliveryInfo> {
  const job = await queue.getJob(id);
  if (!job)
    throw new PorterError('PORTER_NOT_FOUND', `no delivery ${id} (kept for the result TTL)`);
  const state = await job.getState();
  if (state !== 'completed' && state !== 'failed') {
    throw new PorterError(
      'PORTER_CONFLICT',
      `delivery ${id} is ${STATE_OF[state] ?? state}: it is sent already; redeliver one that was delivered or failed`,
    );
  }
  await job.log(`${new Date().toISOString()} redelivery asked`);
  await job.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
  return describe((await queue.getJob(id))!);
}
