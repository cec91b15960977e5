/**
 * Everything a porter process shares: configuration, Redis, the result store, the queues
 * and the admin client. The CLI, the HTTP API and the workers build one and close it once.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { AdminClient } from '../admin/client.js';
import type { Env } from '../config/env.js';
import { SendJournal } from '../execute/send-journal.js';
import { ExportStore } from '../export/export-store.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../execute/retry-policy.js';
import {
  createImportQueue,
  enqueueBatches,
  enqueuePrepare,
  type ImportJobData,
} from '../queue/import-queue.js';
import { createExportQueue, type ExportJobData } from '../queue/export-queue.js';
import {
  createImportScheduleQueue,
  type ImportScheduleJobData,
} from '../queue/import-schedules.js';
import type { BreakerOptions } from '../execute/circuit-breaker.js';
import { ImportHealth, ImportRuntime, UploadKeys } from '../results/import-runtime.js';
import { ImportStore } from '../results/import-store.js';
import { RequestGate } from '../queue/request-gate.js';
import { checkRedis } from '../redis/check-redis.js';
import { createRedisConnection, describeRedis } from '../redis/connect.js';
import { queueErrorListener, watchRedis, type RedisWatch } from '../redis/outage-log.js';
import { watchRoom, type RoomWatch } from '../redis/redis-full.js';
import { createLogger, type Logger } from '../util/logger.js';
import type { BatchRef } from '../execute/run-batch.js';
import { NOOP_METRICS, type PorterMetrics } from '../metrics/metrics.js';
import { loadTargets, type Target, type TargetSet } from '../targets/targets.js';
import { usableTarget } from '../targets/job-target.js';
import { flushTracing, startTracing } from '../observability/tracing.js';
import { loadChannels, type ChannelSet } from '../notify/channels.js';
import type { DeliveryJob } from '../notify/notifier.js';
import { retryAttempts, type RetrySchedule } from '../notify/retry-schedule.js';
import { createNotifyQueue } from '../queue/notify-queue.js';
import { keepStringMethodsFast } from '../util/string-methods.js';

export interface PorterContext {
  readonly env: Env;
  readonly logger: Logger;
  /** Commands: results, state, staging. */
  readonly redis: Redis;
  /** The connection BullMQ builds its own from. */
  readonly bullConnection: Redis;
  /** Whether Redis is away now, told once in the log each way. */
  readonly redisWatch: RedisWatch;
  /** Whether Redis is full (refuses writes for want of memory), told once in the log each way. */
  readonly room: RoomWatch;
  readonly store: ImportStore;
  readonly journal: SendJournal;
  readonly runtime: ImportRuntime;
  readonly health: ImportHealth;
  readonly uploadKeys: UploadKeys;
  readonly breaker: BreakerOptions;
  readonly importQueue: Queue<ImportJobData>;
  /** Export state and progress. */
  readonly exportStore: ExportStore;
  /** Export runs and the schedulers that make them. */
  readonly exportQueue: Queue<ExportJobData>;
  /** Import schedules and the runs they make. */
  readonly importScheduleQueue: Queue<ImportScheduleJobData>;
  readonly retryPolicy: RetryPolicy;
  /** Every admin server this process may reach, by name (PORTER_TARGETS_FILE, ADMIN_*). */
  readonly targets: TargetSet;
  /** Where events are told (PORTER_NOTIFY_FILE); none without it. */
  readonly channels: ChannelSet;
  /** Deliveries of events to channels, and their retry schedule. */
  readonly notifyQueue: Queue<DeliveryJob>;
  readonly notifyRetry: RetrySchedule;
  /** The rate cap and 429 back-off shared by every request to one target, across workers. */
  gateOf(target: Target): RequestGate;
  /** Where the process's parts report their work (admin calls, records, batches). */
  readonly metrics: PorterMetrics;
  enqueueBatches(refs: Iterable<BatchRef>): Promise<number>;
  /**
   * Queues an import's preparation (lookup mode, snapshot), which queues its batches; `target`
   * names the import's target on the spans of its jobs.
   */
  enqueuePrepare(importId: string, target?: string): Promise<void>;
  /**
   * A new admin client of a target (the caller closes it), through the target's gate;
   * `connections` caps the requests it has in flight at once (others wait their turn), and
   * the target's `maxInFlight` caps it further. A read-only target's client refuses writes.
   * Throws PORTER_TARGET_UNKNOWN or PORTER_TARGET_UNAVAILABLE. @defaultValue 16, `default`
   */
  createAdminClient(connections?: number, target?: Target | string): AdminClient;
  close(): Promise<void>;
}

export interface ContextOptions {
  logger?: Logger;
  /** Check Redis first and fail with one clear line when it does not answer. @defaultValue true */
  checkRedis?: boolean;
  /** Where admin calls, records and batches are reported. @defaultValue metrics that go nowhere */
  metrics?: PorterMetrics;
  /** The targets, when not read from the environment (`porter dev`). */
  targets?: TargetSet;
  /** The channels, when not read from PORTER_NOTIFY_FILE. */
  channels?: ChannelSet;
}

export async function createPorterContext(
  env: Env,
  options: ContextOptions = {},
): Promise<PorterContext> {
  // first: a refused targets file stops the process before anything holds it open
  const targets = options.targets ?? loadTargets(env);
  // a bad channels file (or a channel URL off the allow-list) stops start-up as well
  const channels = options.channels ?? loadChannels(env);
  const logger = options.logger ?? createLogger({ level: env.LOG_LEVEL });
  // before the queues: they take the tracing's telemetry when they are made
  await startTracing(env, { warn: (message) => logger.warn(message) });
  if (options.checkRedis ?? true) {
    await checkRedis(env, {
      warn: (message) => logger.warn(message),
      allowEviction: env.PORTER_ALLOW_EVICTION,
    });
  }
  // commands issued in the same tick go out in one write: batches in hand share round trips
  const redis = createRedisConnection(env, 'commands');
  // ioredis, loaded by now, left String.prototype slow (src/util/string-methods.ts)
  keepStringMethodsFast();
  const bullConnection = createRedisConnection(env, 'queue');
  const watch = watchRedis(logger, describeRedis(env));
  watch.add(redis);
  watch.add(bullConnection);
  const room = watchRoom(logger, describeRedis(env));
  const ttlSeconds = Math.round(env.PORTER_RESULT_TTL_DAYS * 24 * 3600);
  const store = new ImportStore({ redis, prefix: env.PORTER_PREFIX, ttlSeconds });
  const journal = new SendJournal(redis, env.PORTER_PREFIX, ttlSeconds);
  const runtime = new ImportRuntime(redis, env.PORTER_PREFIX, ttlSeconds);
  const health = new ImportHealth(redis, env.PORTER_PREFIX);
  const uploadKeys = new UploadKeys(redis, env.PORTER_PREFIX);
  const breaker: BreakerOptions = {
    threshold: env.PORTER_BREAKER_THRESHOLD,
    minCalls: env.PORTER_BREAKER_MIN_CALLS,
    windowMs: env.PORTER_BREAKER_WINDOW_MS,
    cooldownMs: env.PORTER_BREAKER_COOLDOWN_MS,
  };
  const importQueue = createImportQueue({
    connection: bullConnection,
    prefix: env.PORTER_PREFIX,
    failedJobTtlSeconds: ttlSeconds,
  });
  const gates = new Map<string, RequestGate>();
  const gateOf = (target: Target): RequestGate => {
    let gate = gates.get(target.name);
    if (!gate) {
      gate = new RequestGate(redis, env.PORTER_PREFIX, target.maxRps, target.name);
      gates.set(target.name, gate);
    }
    return gate;
  };
  const exportStore = new ExportStore({ redis, prefix: env.PORTER_PREFIX, ttlSeconds });
  const exportQueue = createExportQueue({
    connection: bullConnection,
    prefix: env.PORTER_PREFIX,
    jobTtlSeconds: ttlSeconds,
  });
  const importScheduleQueue = createImportScheduleQueue({
    connection: bullConnection,
    prefix: env.PORTER_PREFIX,
    jobTtlSeconds: ttlSeconds,
  });
  const notifyRetry: RetrySchedule = {
    baseMs: env.PORTER_NOTIFY_RETRY_BASE_MS,
    maxMs: env.PORTER_NOTIFY_RETRY_MAX_MS,
    windowMs: Math.round(env.PORTER_NOTIFY_RETRY_HOURS * 3_600_000),
  };
  const notifyQueue = createNotifyQueue({
    connection: bullConnection,
    prefix: env.PORTER_PREFIX,
    attempts: retryAttempts(notifyRetry),
    jobTtlSeconds: ttlSeconds,
  });
  const retryPolicy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    maxAttempts: env.PORTER_MAX_ATTEMPTS,
    baseDelayMs: env.PORTER_RETRY_BASE_MS,
    maxDelayMs: env.PORTER_RETRY_MAX_MS,
  };
  // no bare stack trace from a queue: BullMQ prints one when an error has no listener
  importQueue.on('error', queueErrorListener(logger, 'import queue', 'warn', room));
  exportQueue.on('error', queueErrorListener(logger, 'export queue', 'warn', room));
  importScheduleQueue.on(
    'error',
    queueErrorListener(logger, 'import schedule queue', 'warn', room),
  );
  notifyQueue.on('error', queueErrorListener(logger, 'notify queue', 'warn', room));
  const metrics = options.metrics ?? NOOP_METRICS;
  let closing: Promise<void> | undefined;
  return {
    env,
    logger,
    redis,
    bullConnection,
    redisWatch: watch,
    room,
    store,
    journal,
    runtime,
    health,
    uploadKeys,
    breaker,
    importQueue,
    exportStore,
    exportQueue,
    importScheduleQueue,
    retryPolicy,
    targets,
    channels,
    notifyQueue,
    notifyRetry,
    gateOf,
    metrics,
    enqueueBatches: (refs) => enqueueBatches(importQueue, refs),
    enqueuePrepare: (importId, target) => enqueuePrepare(importQueue, importId, target),
    createAdminClient: (connections, which) => {
      const target = usableTarget(typeof which === 'object' ? which : targets.resolve(which));
      const gate = gateOf(target);
      const wanted = connections ?? 16;
      return new AdminClient({
        ...target.client!,
        connections: Math.min(wanted, target.maxInFlight ?? wanted),
        readOnly: target.readOnly ? target.name : undefined,
        target: target.name,
        beforeRequest: (signal) => gate.beforeRequest(signal),
        onCall: (event) => metrics.adminCall(event),
      });
    },
    close: () => {
      closing ??= (async () => {
        await Promise.all([
          importQueue.close(),
          exportQueue.close(),
          importScheduleQueue.close(),
          notifyQueue.close(),
        ]);
        await Promise.allSettled([redis.quit(), bullConnection.quit()]);
        // the spans of this process's work leave before it exits
        await flushTracing();
      })();
      return closing;
    },
  };
}
