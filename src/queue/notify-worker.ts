/**
 * The BullMQ adapter of deliveries: each job is one event to one channel, handed to the core
 * `deliver`. Every attempt is logged (the job's log and the process log); a failed attempt is
 * retried on the retry schedule, a permanent failure (a redirect to another host, a host off the
 * allow-list) is not. A worker killed mid-delivery leaves its job to another once its lock
 * lapses: the delivery is made again with the same id, never lost.
 */
import { UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { ChannelSet } from '../notify/channels.js';
import { deliver, type DeliverOptions } from '../notify/deliver.js';
import { DeliveryError } from '../notify/delivery-error.js';
import type { DeliveryJob } from '../notify/notifier.js';
import { retryDelay, type RetrySchedule } from '../notify/retry-schedule.js';
import { queueErrorListener } from '../redis/outage-log.js';
import { queuePrefix } from '../redis/key-tags.js';
import { NOTIFY_BACKOFF, NOTIFY_QUEUE } from './notify-queue.js';

export interface NotifyWorkerOptions {
  connection: ConnectionOptions;
  prefix: string;
  channels: ChannelSet;
  deliver: Omit<DeliverOptions, 'now'>;
  schedule: RetrySchedule;
  /** @defaultValue 30000 */
  lockDurationMs?: number;
  /** Deliveries in flight at once. @defaultValue 4 */
  concurrency?: number;
  logger: Logger;
  /** Told when a delivery is given up (its last attempt failed, or it cannot succeed). */
  onGiveUp?(job: DeliveryJob, reason: string): void;
}

export function createNotifyWorker(options: NotifyWorkerOptions): Worker<DeliveryJob, string> {
  const { logger } = options;
  const processor = async (
    job: Job<DeliveryJob, string>,
    _token?: string,
    signal?: AbortSignal,
  ): Promise<string> => {
    const { channel: name, event } = job.data;
    const attempt = job.attemptsMade + 1;
    const log = { deliveryId: job.id, event: event.name, channel: name, attempt };
    const channel = options.channels.get(name);
    if (!channel) {
      const reason = `channel ${name} is no longer configured`;
      await job.log(`${new Date().toISOString()} attempt ${attempt}: ${reason}`);
      throw new UnrecoverableError(reason);
    }
    try {
      const answer = await deliver(channel, event, job.id!, { ...options.deliver, signal });
      await job.log(`${new Date().toISOString()} attempt ${attempt}: delivered (${answer})`);
      logger.info({ ...log, answer }, 'notification delivered');
      return answer;
    } catch (error) {
      const reason = error instanceof DeliveryError ? error.message : 'delivery failed';
      await job.log(`${new Date().toISOString()} attempt ${attempt}: failed: ${reason}`);
      logger.warn({ ...log, reason }, 'notification attempt failed');
      if (error instanceof DeliveryError && error.permanent) throw new UnrecoverableError(reason);
      throw new Error(reason, { cause: error });
    }
  };
  const lockDuration = options.lockDurationMs ?? 30_000;
  const worker = new Worker<DeliveryJob, string>(NOTIFY_QUEUE, processor, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, NOTIFY_QUEUE),
    concurrency: options.concurrency ?? 4,
    lockDuration,
    stalledInterval: lockDuration,
    // a delivery whose worker died is sent again, however often that happens
    maxStalledCount: 100,
    settings: {
      backoffStrategy: (attemptsMade: number, type?: string) =>
        type === NOTIFY_BACKOFF ? retryDelay(options.schedule, attemptsMade) : 1000,
    },
  });
  worker.on('failed', (job, error) => {
    if (!job) return;
    const last =
      job.attemptsMade >= (job.opts.attempts ?? 1) || error instanceof UnrecoverableError;
    if (last) options.onGiveUp?.(job.data, error.message);
  });
  worker.on('error', queueErrorListener(logger, 'notify worker'));
  return worker;
}
