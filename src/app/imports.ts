/** Import use cases shared by the CLI and the HTTP API: submit, follow, cancel, report. */
import type { Writable } from 'node:stream';
import { PorterError } from '../errors/porter-error.js';
import type { ImportInfo, ImportOptions, RecordResult, ResultStatus } from '../model/import.js';
import { newImportId } from '../results/import-id.js';
import { writeCsvReport, writeJsonReport } from '../results/index.js';
import { submitImport, type SubmitImportRequest } from '../imports/submit-import.js';
import {
  CANCELLED_REASON,
  dropPendingBatches,
  promoteDelayedBatches,
} from '../queue/pending-batches.js';
import { FINAL_IMPORT_STATES } from '../model/import.js';
import { naturalKey } from '../plan/natural-key.js';
import { lookalikeKey } from '../ingest/lookalike.js';
import { checksLookalikes } from '../snapshot/lookup-mode.js';
import { checkSyncImport } from '../sync/sync-options.js';
import { isRetryable } from '../errors/retryable.js';
import type { PorterContext } from './context.js';
import { requireAppliable, requireHeld } from './plan-approval.js';
import { bindTarget } from '../targets/job-target.js';
import { checkFourEyes, recordApproval } from '../auth/four-eyes.js';
import { checkTargetAllowed } from '../auth/target-limits.js';
import { currentPrincipal } from '../auth/acting.js';
import { emitInBackground } from './notify.js';
import { breakerNotice, planNotice } from '../notify/work-notices.js';
import { isScimPlan, releaseScimPlan } from './scim-release.js';

export type ReportFormat = 'csv' | 'json';

/**
 * The options bound to their target (`default` when they name none): the name and fingerprint
 * it has here. Refused before anything is stored when the target is unknown, was configured
 * otherwise when the options were first bound (a retry, apply or undo), or is read-only and the
 * import writes.
 */
export function boundToTarget(context: PorterContext, options: ImportOptions): ImportOptions {
  const writes = options.dryRun !== true;
  return { ...options, ...bindTarget(context.targets, options, { writes }).ref };
}

/** Receives an upload and queues it; `onCreated` fires with the id before the upload is read. */
export async function startImport(
  context: PorterContext,
  request: SubmitImportRequest,
  onCreated?: (info: ImportInfo) => void,
): Promise<ImportInfo> {
  const options = checkSyncImport(
    boundToTarget(
      context,
      request.options.mode === 'sync'
        ? request.options
        : { ...request.options, lookup: request.options.lookup ?? context.env.PORTER_LOOKUP },
    ),
  );
  return submitImport(
    { ...request, options },
    {
      store: context.store,
      keys: context.uploadKeys,
      room: context.room,
      enqueuePrepare: (importId) => context.enqueuePrepare(importId, options.target),
      enqueueBatches: (refs) => context.enqueueBatches(refs),
      onCreated,
      maxRecordBytes: context.env.PORTER_MAX_RECORD_BYTES,
      directory: (resource) => readDirectory(context, resource, options.target),
    },
  );
}

/**
 * A target's records of a resource, streamed (for a mapping's `$unique`); refused
 * (PORTER_FORBIDDEN) to a principal limited to other targets, before anything is read.
 */
export async function* readDirectory(
  context: PorterContext,
  resource: ImportOptions['resource'],
  target?: string,
): AsyncGenerator<Record<string, unknown>> {
  const resolved = context.targets.resolve(target);
  checkTargetAllowed(resolved.name);
  const client = context.createAdminClient(1, resolved);
  try {
    for await (const batch of client.streamBatches(resource)) {
      yield* batch as Array<Record<string, unknown>>;
    }
  } finally {
    await client.close();
  }
}

/** The import, or PORTER_NOT_FOUND. */
export async function requireImport(context: PorterContext, importId: string): Promise<ImportInfo> {
  const info = await context.store.get(importId);
  if (!info) {
    throw new PorterError(
      'PORTER_NOT_FOUND',
      `no import ${importId} (results expire after ${context.env.PORTER_RESULT_TTL_DAYS} days)`,
    );
  }
  return info;
}

/**
 * The import that wrote what this one planned: for a held sync that was approved, the import
 * that wrote its plan (`writtenBy`); the import itself otherwise. Refused for a held sync not
 * approved: nothing of it was written (held: approve or cancel it; cancelled: nothing to do).
 */
export async function writerOf(context: PorterContext, info: ImportInfo): Promise<ImportInfo> {
  if (info.writtenBy !== undefined) return requireImport(context, info.writtenBy);
  if (info.state === 'held') {
    throw new PorterError(
      'PORTER_CONFLICT',
      `sync ${info.id} is held for approval: nothing of it was written; ` +
        `approve it (porter approve ${info.id}) or drop it (porter cancel ${info.id})`,
    );
  }
  if (info.sync?.held === true && !info.options.dryRun) {
    throw new PorterError(
      'PORTER_INPUT_EMPTY',
      `sync ${info.id} was ${info.state} while held for approval: nothing of it was written`,
    );
  }
  return info;
}

export interface ImportDescription extends ImportInfo {
  progress: { percent: number; ratePerSecond: number; etaSeconds?: number };
  /** Calls made to the admin server so far. */
  calls: { writeCalls: number; lookupReads: number; reconcileReads: number };
}

/** The import with its progress (rate, ETA) and the calls it made so far. */
export async function describeImport(
  context: PorterContext,
  importId: string,
): Promise<ImportDescription> {
  const info = await requireImport(context, importId);
  const [progress, calls] = await Promise.all([
    context.store.progress(importId),
    context.runtime.calls(importId),
  ]);
  const percent = info.total > 0 ? Math.round((1000 * info.done) / info.total) / 10 : 0;
  return {
    ...info,
    progress: {
      percent,
      ratePerSecond: Math.round(progress.ratePerSecond),
      etaSeconds: progress.etaSeconds,
    },
    calls,
  };
}

/** Streams an import's per-record report in input order. */
export async function writeReport(
  context: PorterContext,
  importId: string,
  out: Writable,
  options: {
    format: ReportFormat;
    status?: ResultStatus[];
    /** End `out` after the report. @defaultValue true */
    end?: boolean;
  },
): Promise<number> {
  const info = await requireImport(context, importId);
  const results = context.store.results(importId, { status: options.status });
  if (options.format === 'json') return writeJsonReport(results, out, { end: options.end });
  // a report of the failed records lists the input columns first, ready to fix and upload again
  const inputFirst =
    options.status !== undefined && options.status.every((status) => status !== 'succeeded');
  // a JSON upload's later records may hold keys its first lacks: they are columns too
  const columns = [...info.columns, ...(info.moreColumns ?? [])];
  return writeCsvReport(results, out, { columns, inputFirst, end: options.end });
}

/** Whether any worker listens on the import queue (for a hint when nothing moves). */
export async function workersRunning(context: PorterContext): Promise<boolean> {
  const workers = await context.importQueue.getWorkers();
  return workers.length > 0;
}

/**
 * Cancels an import: no batch not yet started is ever sent. Batches still waiting in the
 * queue are removed and their records reported `unprocessed` at once; a batch in a worker's
 * hand stops before its next call.
 */
export async function cancelImport(
  context: PorterContext,
  importId: string,
  reason?: string,
): Promise<ImportInfo> {
  const info = await requireImport(context, importId);
  if (FINAL_IMPORT_STATES.has(info.state)) {
    throw new PorterError(
      'PORTER_CONFLICT',
      `import ${importId} already ended ${info.state}; nothing to cancel`,
    );
  }
  await context.store.cancel(importId, reason);
  await dropPendingBatches(context.importQueue, context, importId, CANCELLED_REASON);
  // a held sync's plan is dropped: nothing of it can be approved any more
  if (info.state === 'held') {
    await context.redis.unlink(context.store.keys(importId).staged);
    emitInBackground(context, planNotice('dropped', info, actingName()));
  }
  return requireImport(context, importId);
}

/** Resumes a paused import at once: its waiting batches run now, without waiting for a probe. */
export async function resumeImport(context: PorterContext, importId: string): Promise<ImportInfo> {
  const info = await requireImport(context, importId);
  if (info.state !== 'paused') {
    throw new PorterError('PORTER_CONFLICT', `import ${importId} is ${info.state}, not paused`);
  }
  // forget the failures first: a call that failed before the resume must not pause it again
  await context.health.clear(importId);
  await context.store.resume(importId);
  await promoteDelayedBatches(context.importQueue, context.store, importId);
  const resumed = await requireImport(context, importId);
  emitInBackground(context, {
    ...breakerNotice('resumed', resumed, `resumed by ${actingName()}`),
    key: `${importId}.resumed.${Date.now()}`,
  });
  return resumed;
}

/**
 * Applies a finished dry run: a new import (`applyOf`) of the same records with the same options,
 * whose records the plan decided without a write (failed, skipped) keep that result, and whose
 * planned records are written only where the server still holds the record the plan was made
 * against (else `PORTER_PLAN_STALE`, not written).
 */
export async function applyImport(
  context: PorterContext,
  dryRunId: string,
  onCreated?: (info: ImportInfo) => void,
): Promise<ImportInfo> {
  const plan = await requireImport(context, dryRunId);
  requireAppliable(plan);
  checkFourEyes(context.targets, plan);
  const application = await startApplication(context, plan, { onCreated });
  await recordApproval(context.redis, context.store.keys(dryRunId).meta, plan, application.id);
  return application;
}

/**
 * Approves a held sync: its plan is written as planned by a new import (`applyOf` names the held
 * one), each record only where the server still holds what it was planned against, else
 * `PORTER_PLAN_STALE`, not written. The held sync becomes completed, so it is approved once.
 */
export async function approveImport(
  context: PorterContext,
  heldId: string,
  onCreated?: (info: ImportInfo) => void,
): Promise<ImportInfo> {
  const plan = await requireImport(context, heldId);
  requireHeld(plan);
  // a target that changed or turned read-only refuses before the held sync changes state
  boundToTarget(context, { ...plan.options, dryRun: false, stream: undefined });
  checkFourEyes(context.targets, plan);
  // a held SCIM plan is released here: its locks and deletes in multi-record calls
  if (isScimPlan(plan)) return releaseScimPlan(context, plan, onCreated);
  const applicationId = newImportId();
  const bad = plan.counts.failed + plan.counts.unprocessed;
  const reason = `approved; written by import ${applicationId}`;
  const to = bad === 0 ? 'completed' : 'completed_with_errors';
  // the state changes first and once: two approvals at the same time write the plan once
  if (!(await context.store.transition(heldId, ['held'], to, reason))) {
    throw new PorterError('PORTER_CONFLICT', `import ${heldId} is no longer held`);
  }
  // the held sync names the import that writes it: undo, retry and status follow it there
  await context.store.setLinks(heldId, {
    approvedAt: new Date().toISOString(),
    writtenBy: applicationId,
  });
  await recordApproval(context.redis, context.store.keys(heldId).meta, plan, applicationId);
  const application = await startApplication(context, plan, { id: applicationId, onCreated });
  // the plan's records now live in the application; the held sync keeps its report
  await context.redis.unlink(context.store.keys(heldId).staged);
  emitInBackground(context, planNotice('approved', plan, actingName(), application));
  return application;
}

/** A new import that writes a plan: a finished dry run, or an approved held sync. */
async function startApplication(
  context: PorterContext,
  plan: ImportInfo,
  init: { id?: string; onCreated?: (info: ImportInfo) => void },
): Promise<ImportInfo> {
  const dryRunId = plan.id;
  const { store } = context;
  const info = await store.create({
    id: init.id,
    options: boundToTarget(context, { ...plan.options, dryRun: false, stream: undefined }),
    source: plan.source,
    applyOf: dryRunId,
    undoOf: plan.undoOf,
    columns: plan.columns,
  });
  init.onCreated?.(info);
  const staged = await store.copyStaged(dryRunId, info.id);
  // the keys the snapshot of this application keeps, as an upload's would be, with their
  // look-alike forms when it may create: a key that came on the server since the plan and looks
  // like one of them is refused as it would have been then
  // (a sync's application reads its keys alone: its preparation compares no look-alike)
  const forms = checksLookalikes(info.options) && info.options.mode !== 'sync';
  for (let start = 0; start < staged; start += 1000) {
    const records = await store.readStaged(info.id, start, 1000);
    await context.uploadKeys.claimKeys(
      info.id,
      records.map((record) => {
        const key = naturalKey(plan.options.resource, record.record);
        return {
          key,
          row: record.row,
          lookalike: forms && key !== '' ? lookalikeKey(key) : undefined,
        };
      }),
      { refuseRepeats: false },
    );
  }
  // what the plan decided without a write stays decided: only planned records are written
  let decided: RecordResult[] = [];
  const flush = async (): Promise<void> => {
    if (decided.length > 0) await store.recordResults(info.id, decided);
    decided = [];
  };
  for await (const result of store.results(dryRunId)) {
    if (result.status === 'planned') continue;
    decided.push(result);
    if (decided.length >= 1000) await flush();
  }
  await flush();
  const batches = Math.ceil(staged / plan.options.batchSize);
  const received = await store.markReceived(info.id, { total: plan.total, batches });
  if (batches > 0 || plan.options.mode === 'sync') {
    await context.enqueuePrepare(info.id, info.options.target);
  }
  return received;
}

/** Failed records a retry leaves out, because sending them again cannot mend them. */
export interface RetryLeftOut {
  total: number;
  /** How many per error code. */
  byCode: Record<string, number>;
}

/** What a retry of an ended import would send, and what it leaves out. */
export interface RetrySelection {
  /** Records the retry sends: unprocessed ones and failures a retry can mend. */
  retryable: number;
  leftOut: RetryLeftOut;
}

/** Counts what a retry of these statuses would send and leave out (see src/errors/retryable.ts). */
export async function selectForRetry(
  context: PorterContext,
  importId: string,
  statuses: ResultStatus[] = ['failed', 'unprocessed'],
): Promise<RetrySelection> {
  const info = await requireImport(context, importId);
  const selection: RetrySelection = { retryable: 0, leftOut: { total: 0, byCode: {} } };
  // a held sync's plan is retried where it was written, and not at all when it was not
  const heldOnly = info.writtenBy === undefined && info.sync?.held === true;
  if (heldOnly && !info.options.dryRun) return selection;
  const writer = await writerOf(context, info);
  for await (const result of context.store.results(writer.id, { status: statuses })) {
    if (result.serverOnly) continue;
    if (isRetryable(result)) {
      selection.retryable += 1;
      continue;
    }
    const code = result.errorCode ?? 'no code';
    selection.leftOut.total += 1;
    selection.leftOut.byCode[code] = (selection.leftOut.byCode[code] ?? 0) + 1;
  }
  return selection;
}

/** "2 PORTER_ROW_INVALID, 1 PORTER_KEY_LOOKALIKE", most first. */
export function describeLeftOut(leftOut: RetryLeftOut): string {
  return Object.entries(leftOut.byCode)
    .sort(([codeA, countA], [codeB, countB]) => countB - countA || codeA.localeCompare(codeB))
    .map(([code, count]) => `${count} ${code}`)
    .join(', ');
}

export interface RetryStarted {
  import: ImportInfo;
  leftOut: RetryLeftOut;
}

/**
 * Starts a new import of the records of an ended import that have one of these statuses and
 * that a retry can mend (src/errors/retryable.ts: never a validation failure, a duplicate, a
 * look-alike, the admin guard or a stale plan), read as they were first read (same options and
 * mapping), linked to it by `retryOf`; each result carries the record's row in the first upload
 * as `sourceRow`. Says how many records it left out, by code.
 */
export async function retryImport(
  context: PorterContext,
  givenId: string,
  statuses: ResultStatus[] = ['failed', 'unprocessed'],
  onCreated?: (info: ImportInfo) => void,
): Promise<RetryStarted> {
  // an approved held sync's records were written by another import: that one is retried
  const original = await writerOf(context, await requireImport(context, givenId));
  const importId = original.id;
  if (!original.settled) {
    throw new PorterError(
      'PORTER_CONFLICT',
      `import ${importId} is still ${original.state}; retry it once it has ended`,
    );
  }
  if (original.undoOf !== undefined) {
    throw new PorterError(
      'PORTER_CONFLICT',
      `import ${importId} is an undo: run porter undo ${original.undoOf} again (records turned back already are left unchanged)`,
    );
  }
  const selected = statuses.reduce((sum, status) => sum + original.counts[status], 0);
  if (selected === 0) {
    throw new PorterError(
      'PORTER_INPUT_EMPTY',
      `import ${importId} has no ${statuses.join(' or ')} records to retry`,
    );
  }
  const { retryable, leftOut } = await selectForRetry(context, importId, statuses);
  if (retryable === 0) {
    throw new PorterError(
      'PORTER_INPUT_EMPTY',
      `import ${importId} has no records a retry can mend: ${leftOutText(importId, leftOut)}`,
    );
  }
  const results = context.store.results(importId, { status: statuses });
  // NDJSON keeps typed JSON values as they were, and reads CSV text the way CSV does
  async function* lines(): AsyncGenerator<string> {
    for await (const result of results) {
      // a sync's records found only on the server are the next sync's to handle
      if (result.serverOnly) continue;
      // a record that failed on its own account would fail again, or slip past its check
      if (!isRetryable(result)) continue;
      // the row here lets the retry ask this import's send journal what it had sent
      const links = {
        porter_sourceRow: String(result.sourceRow ?? result.row),
        porter_parentRow: String(result.row),
      };
      yield `${JSON.stringify({ ...result.input, ...links })}\n`;
    }
  }
  // a retry of a sync sends the file's records again as an upsert: a sync of a few records
  // would take every other record on the server for one its file leaves out
  // its records are all read already: a retry of a streamed import does not stream
  const options: ImportOptions =
    original.options.mode === 'sync'
      ? { ...original.options, mode: 'upsert', sync: undefined }
      : { ...original.options, stream: undefined };
  const started = await startImport(
    context,
    {
      options,
      source: lines(),
      fileName: `retry-of-${importId}.ndjson`,
      format: 'ndjson',
      retryOf: importId,
      // the records are still its starter's: a retried dry run is not theirs to apply
      onBehalfOf: original.onBehalfOf ?? original.startedBy,
    },
    onCreated,
  );
  return { import: started, leftOut };
}

/** One sentence on the records a retry left out, and what to do with them. */
export function leftOutText(importId: string, leftOut: RetryLeftOut): string {
  const records = leftOut.total === 1 ? 'record' : 'records';
  return (
    `left out ${leftOut.total} failed ${records} that would fail again or overwrite another ` +
    `record (${describeLeftOut(leftOut)}); fix them in the file ` +
    `(porter report ${importId} --status failed) and import it again`
  );
}

/** Who acts now, for the events that name them. */
function actingName(): string {
  return currentPrincipal()?.name ?? 'porter';
}
