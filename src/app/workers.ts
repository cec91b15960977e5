/** Starts the workers of one process over a porter context, and stops them gracefully. */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import type { Worker } from 'bullmq';
import { createExportWorker } from '../queue/export-worker.js';
import { createImportWorker, SHUTDOWN_REASON } from '../queue/import-worker.js';
import { createImportScheduleWorker } from '../queue/import-schedule-worker.js';
import { runImportScheduleJob } from './import-schedules.js';
import { createMigrationWorker } from '../queue/migration-queue.js';
import { readMigrationSource, stageRunnerDeps } from './migrations.js';
import type { Env } from '../config/env.js';
import { createPorterContext, type PorterContext } from './context.js';
import { onShutdown } from './signals.js';
import { ReadinessProbe } from './readiness.js';
import { UndoLog } from '../results/undo-log.js';
import { TargetClients } from './target-clients.js';
import { runWithoutActor } from '../auth/acting.js';
import { createNotifyWorker } from '../queue/notify-worker.js';
import { auditGiveUp, emitInBackground, watchExpiringTokens, watchImportEnds } from './notify.js';
import { breakerNotice, exportNotice } from '../notify/work-notices.js';

export interface WorkerSetOptions {
  /**
   * Calls to the admin server in flight from this process; it holds half as many batches again
   * (see batchesInHand). @defaultValue PORTER_WORKER_CONCURRENCY
   */
  concurrency?: number;
  /** @defaultValue PORTER_LOCK_DURATION_MS */
  lockDurationMs?: number;
  /** How long close() waits for the batches in hand. @defaultValue PORTER_SHUTDOWN_TIMEOUT_MS */
  shutdownTimeoutMs?: number;
}

export interface WorkerProcessOptions extends WorkerSetOptions {
  /** Port of /metrics, /healthz and /readyz; undefined: none. @defaultValue PORTER_METRICS_PORT */
  metricsPort?: number;
  /** @defaultValue PORTER_METRICS_HOST */
  metricsHost?: string;
}

export interface RunningWorkers {
  workers: Worker[];
  /**
   * Stops taking jobs and lets the batches in hand finish and record their results; past the
   * shutdown timeout it stops waiting (those batches are taken over by another worker once
   * their lock lapses, and the send journal keeps them from being applied twice). Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Batches one worker holds for `calls` calls in flight: half as many again, so that while some
 * batches read, plan and record their results in Redis, others' calls keep every connection
 * busy. One call in flight keeps one batch at a time.
 */
export function batchesInHand(calls: number): number {
  return calls + Math.floor(calls / 2);
}

/**
 * Starts the import, export, schedule and migration workers. They start outside the actor of
 * whatever started them (`porter worker`'s own `cli:<user>`, a request of `porter dev`): each
 * job acts as the principal it works for, or as nobody.
 */
export function startWorkers(
  context: PorterContext,
  options: WorkerSetOptions = {},
): RunningWorkers {
  return runWithoutActor(() => startWorkerSet(context, options));
}

function startWorkerSet(context: PorterContext, options: WorkerSetOptions): RunningWorkers {
  const calls = options.concurrency ?? context.env.PORTER_WORKER_CONCURRENCY;
  // each target's pool caps the import calls in flight to it; exports stream over their own pools
  const clients = new TargetClients(context, calls);
  const exportClients = new TargetClients(context);
  const importWorker = createImportWorker({
    connection: context.bullConnection,
    prefix: context.env.PORTER_PREFIX,
    concurrency: batchesInHand(calls),
    lockDurationMs: options.lockDurationMs ?? context.env.PORTER_LOCK_DURATION_MS,
    queue: context.importQueue,
    logger: context.logger.child({ component: 'import-worker' }),
    prepare: { redis: context.redis, store: context.store },
    room: context.room,
    deps: {
      bindTarget: (ref) => clients.bind(ref),
      directory: { redis: context.redis, prefix: context.env.PORTER_PREFIX },
      undo: new UndoLog(context.redis, context.env.PORTER_PREFIX, context.store.ttlSeconds),
      store: context.store,
      journal: context.journal,
      runtime: context.runtime,
      health: context.health,
      breaker: context.breaker,
      retry: context.retryPolicy,
      metrics: context.metrics,
      onBreaker: (kind, info, reason) =>
        emitInBackground(context, breakerNotice(kind, info, reason)),
    },
  });
  const exportWorker = createExportWorker({
    connection: context.bullConnection,
    prefix: context.env.PORTER_PREFIX,
    lockDurationMs: options.lockDurationMs ?? context.env.PORTER_LOCK_DURATION_MS,
    logger: context.logger.child({ component: 'export-worker' }),
    deps: {
      store: context.exportStore,
      bindTarget: (ref) => exportClients.bind(ref),
      retry: context.retryPolicy,
    },
    onEnd: (info) => {
      const notice = exportNotice(info);
      if (notice) emitInBackground(context, notice);
    },
  });
  // runs of import schedules: each reads its file and submits an import to the queue above
  const importScheduleWorker = createImportScheduleWorker({
    connection: context.bullConnection,
    prefix: context.env.PORTER_PREFIX,
    lockDurationMs: options.lockDurationMs ?? context.env.PORTER_LOCK_DURATION_MS,
    run: (data, jobId) => runImportScheduleJob(context, data, jobId),
    logger: context.logger.child({ component: 'import-schedule-worker' }),
  });
  const migrationWorker = createMigrationWorker({
    connection: context.bullConnection,
    prefix: context.env.PORTER_PREFIX,
    lockDurationMs: options.lockDurationMs ?? context.env.PORTER_LOCK_DURATION_MS,
    logger: context.logger.child({ component: 'migration-worker' }),
    deps: stageRunnerDeps(context),
    readSource: (migrationId, run) => readMigrationSource(context, migrationId, run),
    jobTtlSeconds: context.store.ttlSeconds,
  });
  // deliveries of notifications, on their own: a slow receiver holds none of the work above
  const notifyWorker = createNotifyWorker({
    connection: context.bullConnection,
    prefix: context.env.PORTER_PREFIX,
    channels: context.channels,
    schedule: context.notifyRetry,
    deliver: {
      timeoutMs: context.env.PORTER_NOTIFY_TIMEOUT_MS,
      allowedHosts: context.env.PORTER_NOTIFY_ALLOWED_HOSTS,
    },
    lockDurationMs: options.lockDurationMs ?? context.env.PORTER_LOCK_DURATION_MS,
    logger: context.logger.child({ component: 'notify-worker' }),
    onGiveUp: (job, reason) => auditGiveUp(context, job, reason),
  });
  const importEnds = watchImportEnds(context).catch((error: unknown) => {
    context.logger.warn({ err: error }, 'could not watch import ends for notifications');
    return async () => {};
  });
  const stopTokenWatch = watchExpiringTokens(context);
  let closing: Promise<void> | undefined;
  return {
    workers: [importWorker, exportWorker, importScheduleWorker, migrationWorker, notifyWorker],
    close: () => {
      closing ??= (async () => {
        stopTokenWatch();
        const timeoutMs = options.shutdownTimeoutMs ?? context.env.PORTER_SHUTDOWN_TIMEOUT_MS;
        let timer: NodeJS.Timeout | undefined;
        const drained = Promise.all([
          importWorker.close(),
          exportWorker.close(),
          importScheduleWorker.close(),
          migrationWorker.close(),
          notifyWorker.close(),
          importEnds.then((close) => close()),
        ]).then(() => true);
        // a delivery in flight is given up at once (tried again later): a receiver that hangs
        // never holds a stopping worker
        notifyWorker.cancelAllJobs(SHUTDOWN_REASON);
        const timedOut = new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        });
        const finished = await Promise.race([drained, timedOut]);
        clearTimeout(timer);
        if (!finished) {
          context.logger.warn(
            { timeoutMs },
            'batches still running at the shutdown timeout; leaving them to other workers',
          );
          // abort the batches in hand: their jobs go back to the queue for another worker,
          // and the send journal keeps what they had sent from being applied twice
          importWorker.cancelAllJobs(SHUTDOWN_REASON);
          exportWorker.cancelAllJobs(SHUTDOWN_REASON);
          importScheduleWorker.cancelAllJobs(SHUTDOWN_REASON);
          migrationWorker.cancelAllJobs(SHUTDOWN_REASON);
          await Promise.race([
            drained,
            new Promise((resolve) => setTimeout(resolve, 5_000).unref()),
          ]);
        }
        await Promise.all([clients.close(), exportClients.close()]);
      })();
      return closing;
    },
  };
}

/** A heap V8 may grow to this size is one it sized by a large machine's memory. */
const LARGE_HEAP_BYTES = 1024 ** 3;

/**
 * How far the heap grows past what the last full collection kept before the next one, in
 * percent: V8 lets a heap that may reach gigabytes grow up to four times, and a worker then holds
 * some 100 MiB of garbage at its peak; twice keeps it under 200 MiB for about the same CPU.
 */
export const WORKER_HEAP_GROWING_PERCENT = 100;

/**
 * Collects garbage sooner than V8 does for a heap sized by a large machine's memory (no
 * `--max-old-space-size`); a ceiling the operator set is left as V8 handles it. The flag is one
 * V8 reads at each collection. True when it was set.
 */
export function boundHeapGrowth(): boolean {
  if (getHeapStatistics().heap_size_limit < LARGE_HEAP_BYTES) return false;
  setFlagsFromString(`--heap-growing-percent=${WORKER_HEAP_GROWING_PERCENT}`);
  return true;
}

/**
 * A worker process: start the workers (and the metrics port when one is set), then drain and
 * exit on SIGINT/SIGTERM. Its heap grows to at most twice what its last full collection kept
 * (see boundHeapGrowth).
 */
export async function runWorkerProcess(
  env: Env,
  options: WorkerProcessOptions = {},
): Promise<RunningWorkers & { metricsAddress?: string }> {
  boundHeapGrowth();
  const metricsPort = options.metricsPort ?? env.PORTER_METRICS_PORT;
  // the metrics port's registry and HTTP server are loaded only when there is one
  const [prometheus, opsServer] =
    metricsPort === undefined
      ? []
      : await Promise.all([import('../metrics/prometheus.js'), import('../http/build-ops-app.js')]);
  const metrics = prometheus && new prometheus.PrometheusMetrics();
  const context = await createPorterContext(env, { metrics });
  const running = startWorkers(context, options);
  let metricsAddress: string | undefined;
  const probe = metrics ? new ReadinessProbe(context) : undefined;
  const opsApp =
    metrics && opsServer ? await opsServer.buildOpsApp({ context, metrics, probe }) : undefined;
  if (opsApp) {
    metricsAddress = await opsApp.listen({
      port: metricsPort,
      host: options.metricsHost ?? env.PORTER_METRICS_HOST,
    });
  }
  context.logger.info(
    {
      concurrency: options.concurrency ?? env.PORTER_WORKER_CONCURRENCY,
      targets: context.targets.list().map((target) => `${target.name}=${target.summary.url}`),
      pid: process.pid,
      ...(metricsAddress ? { metrics: `${metricsAddress}/metrics` } : {}),
    },
    'worker started',
  );
  onShutdown(context.logger, async () => {
    // /readyz says `stopping` while the batches in hand finish
    probe?.markStopping();
    await running.close();
    await opsApp?.close();
    await context.close();
  });
  return { ...running, metricsAddress };
}
