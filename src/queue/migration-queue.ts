/**
 * BullMQ wiring of migrations: one flow per migration, whose jobs are its stages. A migration
 * from a live target first has one `read` job, which reads the source and then adds the flow.
 * A parent waits for its child, so the chain `finish ← memberships ← users ← acls ← groups`
 * runs the stages in dependency order, each once the one before it has settled.
 *
 * A stage job starts its import, then re-checks it every `pollMs` by moving itself to the
 * delayed set (it holds no worker while the batches run). A stage whose job fails after its
 * attempts (Redis gone, say) does not block the chain: `ignoreDependencyOnFailure` lets the next
 * stage run, and every record naming one of the failed stage's records then fails
 * PORTER_REFERENCE_FAILED; the migration ends `failed`, naming the stage. Records that failed
 * inside a stage are not a job failure: the next stage runs for the records that do not
 * depend on them.
 */
import {
  DelayedError,
  FlowProducer,
  Queue,
  Worker,
  type ConnectionOptions,
  type FlowJob,
  type Job,
} from 'bullmq';
import type { Logger } from '../util/logger.js';
import { STAGES, type StageName } from '../migrate/migration-model.js';
import {
  finishMigration,
  settleStage,
  startStage,
  type StageRunnerDeps,
} from '../migrate/stage-runner.js';
import { queueErrorListener } from '../redis/outage-log.js';
import { queuePrefix } from '../redis/key-tags.js';
import { withSpan, withWork } from '../observability/tracing.js';

export const MIGRATION_QUEUE = 'migrations';

export interface MigrationJobData {
  migrationId: string;
  /** `read`: a live migration's first step, reading its source target; it queues the flow. */
  stage: StageName | 'finish' | 'read';
}

export interface MigrationFlowOptions {
  connection: ConnectionOptions;
  prefix: string;
  /** Seconds finished jobs stay. @defaultValue 7 days */
  jobTtlSeconds?: number;
}

/** Queues a migration's stages as one flow; adding the same migration again is a no-op. */
export async function enqueueMigration(
  options: MigrationFlowOptions,
  migrationId: string,
): Promise<void> {
  const age = options.jobTtlSeconds ?? 7 * 24 * 3600;
  const opts = (stage: string) => ({
    jobId: `${migrationId}-${stage}`,
    attempts: 5,
    backoff: { type: 'exponential' as const, delay: 1_000 },
    ignoreDependencyOnFailure: true,
    removeOnComplete: { age },
    removeOnFail: { age },
  });
  // the innermost child runs first: groups
  let node: FlowJob | undefined;
  for (const stage of STAGES) {
    const job: FlowJob = {
      name: stage,
      queueName: MIGRATION_QUEUE,
      data: { migrationId, stage } satisfies MigrationJobData,
      opts: opts(stage),
      ...(node ? { children: [node] } : {}),
    } as FlowJob;
    node = job;
  }
  const flow = new FlowProducer({
    connection: options.connection,
    prefix: queuePrefix(options.prefix, MIGRATION_QUEUE),
  });
  // a failure reaches the caller through add(); an unheard `error` event would throw
  flow.on('error', () => {});
  try {
    await flow.add({
      name: 'finish',
      queueName: MIGRATION_QUEUE,
      data: { migrationId, stage: 'finish' } satisfies MigrationJobData,
      opts: { jobId: `${migrationId}-finish`, removeOnComplete: { age }, removeOnFail: { age } },
      children: [node!],
    });
  } finally {
    await flow.close();
  }
}

/**
 * Queues the `read` step of a migration from a live target: one job, which reads the source
 * into Redis and then queues the stages' flow; adding it again is a no-op.
 */
export async function enqueueMigrationRead(
  options: MigrationFlowOptions,
  migrationId: string,
): Promise<void> {
  const age = options.jobTtlSeconds ?? 7 * 24 * 3600;
  const queue = new Queue<MigrationJobData>(MIGRATION_QUEUE, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, MIGRATION_QUEUE),
  });
  try {
    await queue.add(
      'read',
      { migrationId, stage: 'read' },
      {
        jobId: `${migrationId}-read`,
        attempts: READ_ATTEMPTS,
        backoff: { type: 'exponential', delay: 1_000 },
        removeOnComplete: { age },
        removeOnFail: { age },
      },
    );
  } finally {
    await queue.close();
  }
}

const READ_ATTEMPTS = 5;

export interface MigrationWorkerOptions {
  connection: ConnectionOptions;
  prefix: string;
  lockDurationMs: number;
  /** Stage jobs handled at once. @defaultValue 2 */
  concurrency?: number;
  /** How often a running stage looks whether its import has settled. @defaultValue 200 */
  pollMs?: number;
  deps: StageRunnerDeps;
  /**
   * A live migration's `read` step (src/app/migrations.ts readMigrationSource): true when the
   * source is in Redis and the stages may be queued; throws to be tried again.
   */
  readSource: (
    migrationId: string,
    run: { lastAttempt: boolean; signal?: AbortSignal },
  ) => Promise<boolean>;
  /** Seconds finished stage jobs stay. @defaultValue 7 days */
  jobTtlSeconds?: number;
  logger: Logger;
}

/** The worker that runs migration stages. */
export function createMigrationWorker(options: MigrationWorkerOptions): Worker<MigrationJobData> {
  const pollMs = options.pollMs ?? 200;
  // the migration's id is on the spans of its reads and of its stages' imports; its stage jobs,
  // which look again every pollMs, are not traced themselves
  const processor = (
    job: Job<MigrationJobData>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<string> =>
    withWork({ migrationId: job.data.migrationId }, () => processStage(job, token, signal));
  const processStage = async (
    job: Job<MigrationJobData>,
    token?: string,
    signal?: AbortSignal,
  ): Promise<string> => {
    const { migrationId, stage } = job.data;
    if (stage === 'finish') return finishMigration(options.deps, migrationId);
    if (stage === 'read') {
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const read = await withSpan('porter.migration.read', {}, () =>
        options.readSource(migrationId, { lastAttempt, signal }),
      );
      if (!read) return 'not read';
      await enqueueMigration(
        {
          connection: options.connection,
          prefix: options.prefix,
          jobTtlSeconds: options.jobTtlSeconds,
        },
        migrationId,
      );
      return 'read';
    }
    await startStage(options.deps, migrationId, stage);
    if (await settleStage(options.deps, migrationId, stage)) return 'done';
    await job.moveToDelayed(Date.now() + pollMs, token);
    throw new DelayedError();
  };
  const worker = new Worker<MigrationJobData>(MIGRATION_QUEUE, processor, {
    connection: options.connection,
    prefix: queuePrefix(options.prefix, MIGRATION_QUEUE),
    concurrency: options.concurrency ?? 2,
    lockDuration: options.lockDurationMs,
    stalledInterval: options.lockDurationMs,
    maxStalledCount: 5,
  });
  worker.on('failed', (job, error) => {
    options.logger.warn(
      { migrationId: job?.data.migrationId, stage: job?.data.stage, err: error },
      'migration stage failed',
    );
  });
  worker.on('error', queueErrorListener(options.logger, 'migration worker', 'warn'));
  return worker;
}
