/**
 * One batch job, start to end, free of any queue: read the staged records, skip rows
 * that already have a result (a batch may run twice), plan, send, and record exactly
 * one result per row.
 */
import type { ErrorCode } from '../errors/codes.js';
import type { AdminClient } from '../admin/client.js';
import type {
  ImportInfo,
  ImportState,
  ImportStateRead,
  RecordResult,
  StagedRecord,
} from '../model/import.js';
import { FINAL_IMPORT_STATES, WORKING_IMPORT_STATES } from '../model/import.js';
import { RecordLookup } from '../plan/lookup.js';
import { planBatch } from '../plan/plan-batch.js';
import type { AnchorPlanContext } from '../plan/plan-anchor.js';
import { DEFAULT_ANCHOR_KEY } from '../anchor/anchor-settings.js';
import type { BatchPlan, DecidedResult, PlannedOp } from '../plan/planned-op.js';
import type { ResourceName } from '../admin/resources.js';
import { executeOps, type ExecuteStats, type StopDecision } from './execute-batch.js';
import type { RetryPolicy } from './retry-policy.js';
import { BULK_SETTLE_FROM } from './settle-reads.js';
import { failureLimitReason, knownTotal } from './failure-limit.js';
import {
  AdminError,
  classifyFailure,
  describeAdminFailure,
  targetDownError,
} from '../admin/errors.js';
import { recordErrorMessage } from './record-error.js';
import type { ImportHealth, ImportRuntime } from '../results/import-runtime.js';
import { breakerTrips, type BreakerOptions } from './circuit-breaker.js';
import type { SendJournal } from './send-journal.js';
import type { Redis } from 'ioredis';
import type { DirectoryView } from '../plan/directory-view.js';
import { SnapshotLookup } from '../snapshot/snapshot-lookup.js';
import { snapshotKeys } from '../snapshot/snapshot-keys.js';
import { checksLookalikes } from '../snapshot/lookup-mode.js';
import { lookalikeKey } from '../ingest/lookalike.js';
import { syncRules } from '../sync/sync-rules.js';
import type { PorterMetrics } from '../metrics/metrics.js';
import { planUndoBatch } from '../plan/plan-undo.js';
import { encodeUndoEntry, undoEntryOf } from '../plan/undo-entry.js';
import type { UndoLog } from '../results/undo-log.js';
import { isTargetRefusal, type JobTargetRef } from '../targets/job-target.js';

/**
 * The mapping's anchor as planning needs it; the anchors several rows carry are the import's, or
 * (an application of a plan) the plan's.
 */
async function anchorContext(
  info: ImportInfo,
  store: BatchStore,
): Promise<AnchorPlanContext | undefined> {
  const mapping = info.options.mapping;
  if (mapping?.anchor === undefined) return undefined;
  const twice =
    info.anchorsTwice ??
    (info.applyOf === undefined ? undefined : (await store.get(info.applyOf))?.anchorsTwice);
  return { key: mapping.anchorKey ?? DEFAULT_ANCHOR_KEY, twice };
}

/** What a batch needs of the result store. */
export interface BatchStore {
  get(importId: string): Promise<ImportInfo | undefined>;
  readStaged(importId: string, start: number, count: number): Promise<StagedRecord[]>;
  stagedCount(importId: string): Promise<number>;
  missingRows(importId: string, rows: number[]): Promise<number[]>;
  recordResults(
    importId: string,
    results: RecordResult[],
    known?: Pick<ImportInfo, 'columns' | 'options'>,
  ): Promise<{ written: number; info: ImportInfo }>;
  transition(
    importId: string,
    from: readonly ImportState[],
    to: ImportState,
    reason?: string,
  ): Promise<boolean>;
  /** Records when the first batch started, unless known (a streamed import, while receiving). */
  noteStarted(importId: string): Promise<void>;
  /** queued/running → paused, unless the import was resumed at or after `decidedAt`. */
  pause(importId: string, reason: string, decidedAt: number): Promise<boolean>;
  /** `unprocessed` for the staged records [from, to) without a result (see ImportStore). */
  recordUnprocessed(
    importId: string,
    why: { errorCode: string; error: string },
    from?: number,
    to?: number,
  ): Promise<number>;
  /** Active, nothing ever sent and nothing succeeded → failed with the reason and its code. */
  failUnsent(importId: string, reason: string, code: ErrorCode): Promise<boolean>;
  /** The state and its reason alone (asked before every call). */
  stateOf(importId: string): Promise<ImportStateRead | undefined>;
  /** The results of these rows that exist (a dry run's plan, for its application). */
  resultsOf(importId: string, rows: readonly number[]): Promise<Map<number, RecordResult>>;
}

export interface BatchRef {
  importId: string;
  batchIndex: number;
  /** Index of the batch's first record in the staged list. */
  start: number;
  count: number;
}

/** What a batch uses of its import's target: the client, and the user porter signs in as. */
export interface BoundTarget {
  client: AdminClient;
  /** The username porter signs in as: a sync never touches it. */
  selfUser?: string;
  onRateLimited?: (retryAfterMs: number) => Promise<void> | void;
  /** Names the target in Redis keys (a directory's size), so two targets never mix. */
  key?: string;
}

/**
 * Binds an import to its target in this process (src/targets/job-target.ts): throws the
 * target's refusal (unknown here, changed since submission, secrets unreadable) to send nothing.
 */
export type BindTarget = (ref: JobTargetRef) => BoundTarget;

/** A worker's deps: every import is bound to its own target before its batch plans anything. */
export type UnboundBatchDeps = Omit<BatchDeps, 'client' | 'selfUser' | 'onRateLimited'> & {
  bindTarget: BindTarget;
};

export interface BatchDeps {
  store: BatchStore;
  runtime: ImportRuntime;
  health: ImportHealth;
  breaker: BreakerOptions;
  journal: SendJournal;
  client: AdminClient;
  retry: RetryPolicy;
  onRateLimited?: (retryAfterMs: number) => Promise<void> | void;
  signal?: AbortSignal;
  /** Reads in flight at once while planning. @defaultValue 8 */
  lookupConcurrency?: number;
  /** Where imports that read the directory in bulk keep their snapshot. */
  directory?: { redis: Redis; prefix: string };
  /** The username porter signs in as (ADMIN_USER): a sync never touches it. */
  selfUser?: string;
  /** Told of the records' results and of breaker pauses. */
  metrics?: PorterMetrics;
  /** Where an import keeps the values it replaced, for `porter undo`; none kept without it. */
  undo?: UndoLog;
  /** Told when the breaker paused an import, or a probe found the server answering again. */
  onBreaker?(kind: 'paused' | 'resumed', info: ImportInfo, reason?: string): void;
}

export interface BatchReport extends ExecuteStats {
  batchIndex: number;
  /** The import's resource, once its state was read. */
  resource?: ResourceName;
  records: number;
  /** Rows that already had a result from an earlier run of this batch. */
  alreadyDone: number;
  lookupReads: number;
  counts: Record<RecordResult['status'], number>;
  /**
   * Set when this batch stopped the import (failure limit, a target's refusal): its waiting
   * batches must be dropped, their rows reported with `code`.
   */
  stoppedImport?: { reason: string; code: string };
  /** The import is paused: this batch's unsent records wait for a later run. */
  paused?: boolean;
  /** This batch probed a paused import and the server answered: the import runs again. */
  resumedImport?: boolean;
}

/** Runs one batch and returns what it did; safe to run again for the same batch. */
export async function runBatch(
  ref: BatchRef,
  given: BatchDeps | UnboundBatchDeps,
): Promise<BatchReport> {
  const { store } = given;
  const report: BatchReport = {
    batchIndex: ref.batchIndex,
    records: ref.count,
    alreadyDone: 0,
    writeCalls: 0,
    reconcileReads: 0,
    retries: 0,
    splits: 0,
    lookupReads: 0,
    counts: { succeeded: 0, failed: 0, skipped: 0, unprocessed: 0, planned: 0 },
  };
  // asked together: one round trip (the connection pipelines what one tick sends)
  const [info, staged, loweredSize] = await Promise.all([
    store.get(ref.importId),
    store.readStaged(ref.importId, ref.start, ref.count),
    given.runtime.batchSize(ref.importId),
  ]);
  if (!info) return report;
  report.resource = info.options.resource;
  let deps: BatchDeps;
  try {
    deps = 'bindTarget' in given ? { ...given, ...given.bindTarget(info.options) } : given;
  } catch (error) {
    if (!isTargetRefusal(error)) throw error;
    // nothing of the import goes to another server than the one it was submitted for
    const reason = error.message;
    await store.transition(ref.importId, WORKING_IMPORT_STATES, 'failed', reason);
    report.stoppedImport = { reason, code: error.code };
    const why = { errorCode: error.code, error: `not sent: ${reason}` };
    // this batch's rows (a streamed import's queued batches answer for their own rows, so
    // recordUnprocessed leaves them out), then every row no batch answers for
    await store.recordUnprocessed(ref.importId, why, ref.start, ref.start + ref.count);
    await store.recordUnprocessed(ref.importId, why);
    return report;
  }
  // the state read with the staged records decides: one round trip fewer per batch
  const decision = decisionOf(info);
  // a paused import lets one batch per cool-down probe the server; the others wait
  const probe = decision?.kind === 'pause';
  const { lookup, view } = lookupsOf(ref, info, deps, probe, (ended) => {
    report.stoppedImport = ended;
  });
  const stagedRows = staged.map((record) => record.row);
  const [missingRows, sentRows] = await Promise.all([
    store.missingRows(ref.importId, stagedRows),
    deps.journal.sentAmong(ref.importId, stagedRows),
    // what planning will read, in the same round trip (the batch's rows done already as well)
    decision?.kind !== 'stop' && info.undoOf === undefined
      ? view.prefetch?.(staged.map((record) => record.record))
      : undefined,
  ]);
  const missing = new Set(missingRows);
  const todo = staged.filter((record) => missing.has(record.row));
  report.alreadyDone = staged.length - todo.length;
  if (todo.length === 0) return report;

  const byRow = new Map(todo.map((record) => [record.row, record]));
  const save = async (results: DecidedResult[]): Promise<void> => {
    if (results.length === 0) return;
    // completed in place (the results are this batch's own): a copy per record costs as much
    const full = results.map((decided) => {
      const result = decided as RecordResult;
      const staged = byRow.get(result.row);
      // every result names its input line, a dry run's and an early decision's too
      result.line ??= staged?.line;
      result.sourceRow = staged?.sourceRow;
      result.input = staged?.input ?? {};
      if (staged?.serverOnly) result.serverOnly = true;
      return result;
    });
    const { info: after } = await store.recordResults(ref.importId, full, info);
    for (const result of results) report.counts[result.status]++;
    deps.metrics?.records(after.options.resource, results);
    const reason = failureLimitReason(
      after.options.maxFailures,
      after.counts.failed,
      knownTotal(after),
    );
    if (reason && (await store.transition(ref.importId, WORKING_IMPORT_STATES, 'failed', reason))) {
      report.stoppedImport = { reason, code: 'PORTER_FAILURE_LIMIT' };
    }
  };

  if (decision?.kind === 'stop') {
    await save(
      todo.map((record) => ({
        row: record.row,
        line: record.line,
        status: 'unprocessed',
        errorCode: decision.code,
        error: decision.message,
      })),
    );
    return report;
  }
  if (probe && !(await deps.health.takeProbe(ref.importId, deps.breaker.cooldownMs))) {
    report.paused = true;
    return report;
  }
  if (!probe && decision === undefined && info.state === 'queued') {
    await store.transition(ref.importId, ['queued'], 'running');
  } else if (decision === undefined && info.state === 'receiving') {
    // a streamed import's first batch: it is still receiving, and it started now
    await store.noteStarted(ref.importId);
  }

  const onCallOutcome = async (
    failed: boolean,
    startedAt?: number,
    error?: unknown,
  ): Promise<void> => {
    const ended = await callOutcome(ref, info, deps, failed, startedAt, error);
    if (ended) report.stoppedImport = ended;
  };
  const { resource, mode, allowAdmin } = info.options;
  // a held sync plans only, as a dry run does: nothing is written until it is approved
  const dryRun = info.options.dryRun === true || info.sync?.held === true;
  const syncOptions = mode === 'sync' ? info.options.sync : undefined;
  // rows an earlier run of this batch sent (it crashed, or its job was retried)
  const sentBefore = new Set(sentRows.filter((row) => missing.has(row)));
  // a retry: records the import it retries had sent (and may have applied) count as sent too
  if (info.retryOf !== undefined) {
    for (const row of await sentByParent(deps.journal, info.retryOf, todo)) sentBefore.add(row);
  }
  let plan: Awaited<ReturnType<typeof planBatch>>;
  const anchor = await anchorContext(info, deps.store);
  const planning = dryRun ? 'dry-run' : info.applyOf !== undefined ? 'apply' : undefined;
  try {
    plan =
      info.undoOf !== undefined
        ? await planUndoBatch(todo, {
            sentBefore,
            resource,
            allowAdmin,
            force: info.options.force === true,
            lookup: view,
            concurrency: deps.lookupConcurrency,
            planning,
          })
        : await planBatch(todo, {
            sentBefore,
            resource,
            mode,
            allowAdmin,
            allowLookalike: info.options.allowLookalike === true,
            lookup: view,
            concurrency: deps.lookupConcurrency,
            planning,
            sync: syncOptions && {
              rules: syncRules(resource, syncOptions, allowAdmin, deps.selfUser),
              mappingColumns: info.options.mapping?.columns,
            },
            anchor,
          });
  } catch (error) {
    if (error instanceof ImportPausedSignal) {
      report.paused = true;
      return report;
    }
    if (!(error instanceof AdminError) || classifyFailure(error) === 'permanent') throw error;
    // the server failed every try of a read: count it, and wait if that paused the import
    await onCallOutcome(true, undefined, error);
    const after = await stopDecisionOf(store, ref.importId);
    if (after?.kind === 'pause') {
      report.paused = true;
      return report;
    }
    if (after?.kind === 'stop' && after.code === 'PORTER_TARGET_UNREACHABLE') {
      // nothing of the import could be sent: it ended failed, and its records say why
      await save(
        todo.map((record) => ({
          row: record.row,
          line: record.line,
          status: 'unprocessed',
          errorCode: after.code,
          error: after.message,
          attempts: 0,
        })),
      );
      return report;
    }
    // else, as for a call that kept failing: the records are unprocessed, with the last error
    await save(
      todo.map((record) => ({
        row: record.row,
        line: record.line,
        status: 'unprocessed',
        errorCode: error.code,
        error: `not sent: looking it up failed: ${recordErrorMessage(error)}`,
        attempts: 0,
      })),
    );
    return report;
  }
  if (dryRun) {
    await save(planOutcomes(plan));
    return report;
  }
  if (info.applyOf !== undefined) {
    // a plan is applied only where the server still holds what it was planned against
    const planned = await store.resultsOf(
      info.applyOf,
      todo.map((record) => record.row),
    );
    const stale = staleAgainstPlan(plan, planned);
    plan.decided = [...plan.decided.filter((result) => !stale.has(result.row)), ...stale.values()];
    plan.ops = plan.ops.filter((op) => !stale.has(op.row));
  }
  // results wait for the batch's calls and go in one write with theirs, unless a failure among
  // them may reach the failure limit: then each call's (and the early decisions') go at once, so
  // that the limit stops the next call as it would stop the next batch
  const limited = Boolean(info.options.maxFailures);
  const saved = new Set<number>();
  const saveNow = async (results: readonly DecidedResult[]): Promise<void> => {
    const fresh = results.filter((result) => !saved.has(result.row));
    if (!fresh.some((result) => result.status === 'failed')) return;
    for (const result of fresh) saved.add(result.row);
    await keepUndoEntries(deps.undo, ref.importId, resource, plan.ops, fresh);
    await save(fresh);
  };
  if (limited) await saveNow(plan.decided);

  const rows = plan.ops.map((op) => op.row);
  const outcome = await executeOps(plan.ops, {
    client: deps.client,
    resource,
    lookup,
    retry: deps.retry,
    uncertainRows: rows.filter((row) => sentBefore.has(row)),
    clearToSend: async (sent) => {
      const read = await deps.journal.markSentWhile(
        ref.importId,
        probe ? GOING_ON_PROBE : GOING,
        sent,
      );
      const current = decisionOf(read);
      return probe && current?.kind === 'pause' ? undefined : current;
    },
    onRateLimited: deps.onRateLimited,
    onCallOutcome,
    probe,
    stopReason: async () => {
      const current = await stopDecisionOf(store, ref.importId);
      return probe && current?.kind === 'pause' ? undefined : current;
    },
    signal: deps.signal,
    // a batch job may carry several calls' worth of records (src/queue/import-queue.ts)
    maxRecordsPerCall: Math.min(loweredSize ?? Number.POSITIVE_INFINITY, info.options.batchSize),
    afterCall: limited ? saveNow : undefined,
    // an import that read the directory in bulk settles many records with one such read too
    bulkSettleFrom: info.lookup?.mode === 'snapshot' ? BULK_SETTLE_FROM : undefined,
  });
  if (outcome.stats.tooLargeAt !== undefined) {
    // the server refused this many records in one call: later batches send half as many
    await deps.runtime.lowerBatchSize(ref.importId, outcome.stats.tooLargeAt / 2);
  }
  const rest = [...plan.decided, ...outcome.results].filter((result) => !saved.has(result.row));
  // what the writes replaced is kept before their results: a result never outlives its undo entry
  await keepUndoEntries(deps.undo, ref.importId, resource, plan.ops, rest);
  Object.assign(report, outcome.stats);
  report.lookupReads = lookup.reads;
  report.paused = outcome.paused;
  await Promise.all([save(rest), deps.runtime.addCalls(ref.importId, report)]);
  if (probe && !outcome.paused && (outcome.answeredCalls > 0 || plan.ops.length === 0)) {
    // the server answers again; failures from before now no longer count
    await deps.health.clear(ref.importId);
    if (await store.transition(ref.importId, ['paused'], 'running')) {
      report.resumedImport = true;
      deps.onBreaker?.('resumed', info);
    }
  }
  return report;
}

/**
 * Tells the breaker a call's outcome; when it trips, pauses the import and holds the probes for
 * a cool-down. A call that could not reach the target, before anything of the import was sent,
 * ends the import `failed` instead (PORTER_TARGET_UNREACHABLE): nothing could be sent, and no
 * pause would mend a wrong address. Returns that end, when it is one.
 */
async function callOutcome(
  ref: BatchRef,
  info: ImportInfo,
  deps: BatchDeps,
  failed: boolean,
  startedAt = Date.now(),
  error?: unknown,
): Promise<{ reason: string; code: string } | undefined> {
  const { store } = deps;
  const down = failed ? targetDownError(error) : undefined;
  if (down) {
    const reason = `nothing sent: ${describeAdminFailure(down)}`;
    if (await store.failUnsent(ref.importId, reason, 'PORTER_TARGET_UNREACHABLE')) {
      return { reason: reason.replace(/^nothing sent: /, ''), code: 'PORTER_TARGET_UNREACHABLE' };
    }
  }
  // a resume after this read (porter resume, a probe answered) outranks what the read shows
  const readAt = Date.now();
  const window = await deps.health.record(ref.importId, failed, deps.breaker.windowMs, startedAt);
  const why = failed ? breakerTrips(deps.breaker, window) : undefined;
  // the first probe comes after a whole cool-down, not from the next batch picked up
  if (why && (await store.pause(ref.importId, why, readAt))) {
    deps.metrics?.breakerPaused(info.options.resource);
    deps.onBreaker?.('paused', info, why);
    await deps.health.holdProbes(ref.importId, deps.breaker.cooldownMs);
  }
  return undefined;
}

/**
 * The batch's reads of the server (`lookup`), and what planning reads (`view`): the snapshot when
 * the import took one, else the server too.
 */
function lookupsOf(
  ref: BatchRef,
  info: ImportInfo,
  deps: BatchDeps,
  probe: boolean,
  onEnded: (ended: { reason: string; code: string }) => void,
): { lookup: RecordLookup; view: DirectoryView } {
  const { store } = deps;
  const { resource } = info.options;
  // read record by record, a create is compared with the look-alikes the preparation's scan of
  // every server key found
  const lookalikes = deps.directory;
  // a streamed import's scan noted every server key by its form
  const byForm = info.options.stream === true;
  const lookup = new RecordLookup({
    lookalikeOf:
      info.lookup?.mode === 'each' && lookalikes && checksLookalikes(info.options)
        ? async (key) => {
            const found = await lookalikes.redis.hget(
              snapshotKeys(lookalikes.prefix, ref.importId).lookalikes,
              byForm ? lookalikeKey(key) : key,
            );
            return found === null || found === key ? undefined : found;
          }
        : undefined,
    client: deps.client,
    retry: probe ? { ...deps.retry, maxAttempts: 1 } : deps.retry,
    signal: deps.signal,
    onRateLimited: deps.onRateLimited,
    onOutcome: async (failed, startedAt, error) => {
      const ended = await callOutcome(ref, info, deps, failed, startedAt, error);
      if (ended) onEnded(ended);
      // reads of a batch stop as soon as the breaker paused the import (a probe reads on)
      if (failed && !probe && (await stopDecisionOf(store, ref.importId))?.kind === 'pause') {
        throw new ImportPausedSignal();
      }
    },
  });
  // planning reads the snapshot when the import took one; settling what a call did asks the server
  const view: DirectoryView =
    info.lookup?.mode === 'snapshot' && deps.directory
      ? new SnapshotLookup({
          redis: deps.directory.redis,
          keys: snapshotKeys(deps.directory.prefix, ref.importId),
          resource,
          server: lookup,
          lookalikesByForm: byForm,
        })
      : lookup;
  return { lookup, view };
}

/** A dry run's results: every op as `planned`, and a record equal already as `planned` unchanged. */
function planOutcomes(plan: BatchPlan): DecidedResult[] {
  const decided = plan.decided.map((result) =>
    result.status === 'succeeded' ? { ...result, status: 'planned' as const } : result,
  );
  const ops = plan.ops.map((op): DecidedResult => ({
    row: op.row,
    key: op.key,
    action: op.action,
    status: 'planned',
    id: op.existingId,
    changed: op.changed,
    changes: op.changes,
    basis: op.basis,
    attempts: 0,
    warnings: op.warnings.length > 0 ? op.warnings : undefined,
  }));
  return [...decided, ...ops];
}

/**
 * The records whose plan no longer holds: the record read now is not the one the dry run planned
 * against (changed, created or deleted since), or the plan gave it no planned action.
 */
function staleAgainstPlan(
  plan: BatchPlan,
  planned: Map<number, RecordResult>,
): Map<number, DecidedResult> {
  const stale = new Map<number, DecidedResult>();
  const check = (row: number, key: string | undefined, basis: string | undefined): void => {
    const before = planned.get(row);
    if (before?.status === 'planned' && before.basis !== undefined && before.basis === basis)
      return;
    const why =
      before?.status === 'planned'
        ? 'the record changed on the server since the plan was made; run the dry run again'
        : `the plan did not write this record (${before?.status ?? 'no plan'})`;
    stale.set(row, {
      row,
      key,
      action: before?.action,
      status: 'failed',
      errorCode: 'PORTER_PLAN_STALE',
      error: `not written: ${why}`,
      attempts: 0,
    });
  };
  for (const op of plan.ops) check(op.row, op.key, op.basis);
  // a record decided without a call is stale too when its plan was made against another record
  for (const result of plan.decided) {
    if (result.basis !== undefined && planned.get(result.row)?.basis !== result.basis) {
      check(result.row, result.key, result.basis);
    }
  }
  return stale;
}

/** Keeps, for each op the server applied, what undoing it needs (src/plan/undo-entry.ts). */
async function keepUndoEntries(
  undo: UndoLog | undefined,
  importId: string,
  resource: ResourceName,
  ops: readonly PlannedOp[],
  results: readonly DecidedResult[],
): Promise<void> {
  if (!undo) return;
  const opOf = new Map(ops.map((op) => [op.row, op]));
  const entries = new Map<number, string>();
  for (const result of results) {
    const op = opOf.get(result.row);
    const entry = op && undoEntryOf(resource, op, result);
    if (entry) entries.set(entry.row, encodeUndoEntry(resource, entry));
  }
  await undo.keep(importId, entries);
}

/** Rows of a retry whose record the retried import had sent (`porter_parentRow`, its row there). */
async function sentByParent(
  journal: BatchDeps['journal'],
  parentId: string,
  records: readonly StagedRecord[],
): Promise<number[]> {
  const rowByParentRow = new Map<number, number>();
  for (const record of records) {
    const parentRow = Number(record.input.porter_parentRow);
    if (Number.isSafeInteger(parentRow) && parentRow > 0) rowByParentRow.set(parentRow, record.row);
  }
  const sent = await journal.sentAmong(parentId, [...rowByParentRow.keys()]);
  return sent.map((parentRow) => rowByParentRow.get(parentRow)!);
}

/** Whether the import's remaining records may be sent now: stop (final), pause, or go on. */
async function stopDecisionOf(
  store: BatchStore,
  importId: string,
): Promise<StopDecision | undefined> {
  return decisionOf(await store.stateOf(importId));
}

/** Every state, to list the ones that let a call go. */
const STATES: Record<ImportState, true> = {
  receiving: true,
  queued: true,
  running: true,
  paused: true,
  completed: true,
  completed_with_errors: true,
  failed: true,
  cancelled: true,
  held: true,
};

/** The states in which a batch's call may leave; a probe also goes while paused. */
const GOING = (Object.keys(STATES) as ImportState[]).filter(
  (state) => decisionOf({ state }) === undefined,
);
const GOING_ON_PROBE: ImportState[] = [...GOING, 'paused'];

/** The decision a state read (undefined: the import is gone) leads to. */
function decisionOf(info: ImportStateRead | undefined): StopDecision | undefined {
  if (!info)
    return {
      kind: 'stop',
      code: 'PORTER_CANCELLED',
      message: 'not sent: the import no longer exists',
    };
  const why = info.reason ? ` (${info.reason})` : '';
  if (info.state === 'cancelled') {
    return {
      kind: 'stop',
      code: 'PORTER_CANCELLED',
      message: `not sent: the import was cancelled${why}`,
    };
  }
  if (info.reasonCode === 'PORTER_TARGET_UNREACHABLE') {
    return {
      kind: 'stop',
      code: info.reasonCode,
      message: `not sent: ${(info.reason ?? 'the target cannot be reached').replace(/^nothing sent: /, '')}`,
    };
  }
  if (FINAL_IMPORT_STATES.has(info.state)) {
    return {
      kind: 'stop',
      code: 'PORTER_FAILURE_LIMIT',
      message: `not sent: the import ended ${info.state}${why}`,
    };
  }
  if (info.state === 'paused') return { kind: 'pause' };
  return undefined;
}

/** Thrown from a read when the import was paused meanwhile: the batch stops and waits. */
class ImportPausedSignal extends Error {
  constructor() {
    super('the import was paused');
    this.name = 'ImportPausedSignal';
  }
}
