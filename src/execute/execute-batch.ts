/**
 * Runs the planned calls of one batch and gives back one result per op.
 *
 * - transient failure: the same call again, with back-off, honouring Retry-After;
 * - permanent failure of several records: split (at the server's index when it names one,
 *   else in halves) until each bad record fails alone and its batch-mates succeed;
 * - ambiguous failure (sent, no answer): look up what landed, send only what is missing;
 * - "already exists" for a call of several creates (a second run of the batch after Redis lost
 *   its results, a rolled-back AOF): every create of the call is looked up at once, those the
 *   server holds as this import would have written them are settled, and the rest go in one
 *   call, instead of one record settled per refusal (a batch's size squared in records sent);
 * - a 2xx answer: each record is matched to its request record by key; one the answer leaves
 *   out is looked up, and succeeds only when the server is seen to hold it.
 *
 * A row is "uncertain" when a call holding it may have been applied: it got no answer,
 * or an error answer from a server that may apply records before the failing one, or
 * it was in flight when an earlier run of this batch crashed. Before an uncertain create
 * or delete is sent again, the server is asked whether it already happened.
 */
import type { AdminClient } from '../admin/client.js';
import { AdminError, classifyFailure } from '../admin/errors.js';
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { findFresh } from '../plan/find-record.js';
import { UPDATE_ACTIONS } from '../model/import.js';
import { decidedResult, type DecidedResult, type PlannedOp } from '../plan/planned-op.js';
import type { RecordLookup } from '../plan/lookup.js';
import { isConflict, isNotFound, recordErrorCode, recordErrorMessage } from './record-error.js';
import {
  confirmedResult,
  matchAnswer,
  readBackResult,
  unheldFields,
  type AnswerVerdict,
} from './answer-check.js';
import { breakerOutcome } from './circuit-breaker.js';
import { retryDelayMs, sleep, type RetryPolicy } from './retry-policy.js';
import { readMany } from './settle-reads.js';

export interface ExecuteContext {
  client: AdminClient;
  resource: ResourceName;
  lookup: RecordLookup;
  retry: RetryPolicy;
  /** Rows that an earlier run of this batch may have sent (from the send journal). */
  uncertainRows?: Iterable<number>;
  /** Called on 429 before waiting, so every worker can back off together. */
  onRateLimited?: (retryAfterMs: number) => Promise<void> | void;
  /**
   * Checked before each call, once it has its connection: `stop` reports the unsent records
   * unprocessed (cancelled, failure limit); `pause` leaves them without a result, for a later run
   * of the batch.
   */
  stopReason?: () => Promise<StopDecision | undefined>;
  /**
   * The last check before a call leaves, in one step with marking its rows sent (the send
   * journal): the stop decision, the rows marked only when there is none. Without it, the last
   * check is `stopReason` and nothing is journaled.
   */
  clearToSend?: (rows: number[]) => Promise<StopDecision | undefined>;
  /** Told the outcome of every write call: answered, or failed as transient or ambiguous. */
  onCallOutcome?: (failed: boolean, startedAt: number, error?: unknown) => Promise<void> | void;
  /**
   * A probe of a paused import: one try per call, and a transient failure pauses the batch
   * again instead of using up the retries.
   */
  probe?: boolean;
  signal?: AbortSignal;
  random?: () => number;
  /** Records per call at most (a size the server refused with 413 lowers it). */
  maxRecordsPerCall?: number;
  /**
   * Told, after each call of the batch (with whatever its splits, retries and reads took), the
   * results of that call's records.
   */
  afterCall?: (results: DecidedResult[]) => Promise<void>;
  /**
   * From this many records to settle at once, one bulk read of the resource instead of a read
   * per record (src/execute/settle-reads.ts); undefined: always a read per record.
   */
  bulkSettleFrom?: number;
}

export interface ExecuteStats {
  /** Write calls made (PUT, POST, DELETE). */
  writeCalls: number;
  /** Reads made to reconcile uncertain records (a bulk read counts once). */
  reconcileReads: number;
  /** Of them, unfiltered reads of the whole resource. */
  bulkReads?: number;
  /** Groups sent again as they were after a transient failure. */
  retries: number;
  /** Groups split in halves: to isolate a refused record, or to get around an unanswered one. */
  splits: number;
  /** Smallest number of records in a call the server refused with 413, if any. */
  tooLargeAt?: number;
}

export type StopDecision = { kind: 'stop'; code: string; message: string } | { kind: 'pause' };

export interface ExecuteOutcome {
  /** One result per op, except ops left unsent because the import was paused. */
  results: DecidedResult[];
  stats: ExecuteStats;
  /** The import was paused: ops without a result wait for a later run of the batch. */
  paused: boolean;
  /** Write calls that got an answer (any answer, refusals included). */
  answeredCalls: number;
}

/** Sends the ops, grouped by method, and returns exactly one result per op. */
export async function executeOps(
  ops: readonly PlannedOp[],
  context: ExecuteContext,
): Promise<ExecuteOutcome> {
  const run = new BatchRun(context);
  const perCall = Math.max(1, context.maxRecordsPerCall ?? Number.POSITIVE_INFINITY);
  for (const method of ['DELETE', 'POST', 'PUT'] as const) {
    const group = ops.filter((op) => op.method === method);
    for (let start = 0; start < group.length && !run.paused; start += perCall) {
      const call = group.slice(start, start + perCall);
      await run.send(call, 1);
      if (context.afterCall) {
        await context.afterCall(call.flatMap((op) => run.results.get(op.row) ?? []));
      }
    }
  }
  return {
    results: [...run.results.values()],
    stats: run.stats,
    paused: run.paused,
    answeredCalls: run.answeredCalls,
  };
}

/** Refusals that are usually about the caller or the route, not about one record. */
const CALL_LEVEL_STATUSES: ReadonlySet<number> = new Set([401, 403, 405]);

/** Thrown by a call's last check to keep it from leaving; the batch knows why. */
class CallStopped extends Error {
  constructor() {
    super('the call was stopped before it left');
    this.name = 'CallStopped';
  }
}

class BatchRun {
  readonly results = new Map<number, DecidedResult>();
  readonly stats: ExecuteStats = { writeCalls: 0, reconcileReads: 0, retries: 0, splits: 0 };
  paused = false;
  /** A cancel or the failure limit, once a call of this batch saw it. */
  private stopped: Extract<StopDecision, { kind: 'stop' }> | undefined;
  answeredCalls = 0;
  private readonly uncertain: Set<number>;
  private readonly attempts = new Map<number, number>();
  /** Write calls of this batch the server accepted. */
  private acceptedCalls = 0;
  /** The last refusal of a record sent alone. */
  private lastLoneRefusal: AdminError | undefined;
  /** What a read of many records at once found, by row: used by the next look at each. */
  private readonly prefound = new Map<number, Record<string, unknown> | undefined>();
  /** Rows a conflict already had looked up with their batch-mates: not again in this run. */
  private readonly conflictChecked = new Set<number>();

  constructor(private readonly context: ExecuteContext) {
    this.uncertain = new Set(context.uncertainRows ?? []);
  }

  /** Sends one group of same-method ops; `attempt` counts tries of this group on transient failures. */
  async send(ops: PlannedOp[], attempt: number): Promise<void> {
    if (this.paused) return;
    if (this.stopped) {
      // a stop seen by an earlier call holds for the rest of the batch: no call, no wait
      this.stopBefore(await this.reconcile(ops), this.stopped);
      return;
    }
    if (this.readsFirst(ops)) {
      // a pause seen now spares the server the reads of records an earlier call may have applied
      const stop = await this.context.stopReason?.();
      if (stop?.kind === 'pause') {
        this.paused = true;
        return;
      }
    }
    const pending = await this.reconcile(ops);
    if (pending.length === 0) return;
    const { clearToSend } = this.context;
    const rows = pending.map((op) => op.row);
    let stopSeen: StopDecision | undefined;
    for (const op of pending) this.attempts.set(op.row, (this.attempts.get(op.row) ?? 0) + 1);
    this.stats.writeCalls++;
    let answer: Record<string, unknown>[];
    const startedAt = Date.now();
    try {
      answer = await this.context.client.write(
        this.context.resource,
        pending[0]!.method,
        pending.map((op) => op.payload),
        this.context.signal,
        {
          // The last moment before the call leaves: it has its connection and the gate let it
          // through. A cancel, a pause or a failure limit reached by now still stops it. Only a
          // call that goes puts its rows in the send journal: a later run (a resume, a retry)
          // takes a journaled row for one the server may have applied.
          beforeSend: async () => {
            const stop = clearToSend ? await clearToSend(rows) : await this.context.stopReason?.();
            if (stop) {
              stopSeen = stop;
              throw new CallStopped();
            }
          },
        },
      );
    } catch (error) {
      if (stopSeen) {
        // the call never left
        this.stats.writeCalls--;
        for (const op of pending) this.attempts.set(op.row, this.attempts.get(op.row)! - 1);
        this.stopBefore(pending, stopSeen);
        return;
      }
      const failed = breakerOutcome(error);
      if (failed === false) this.answeredCalls++;
      if (failed !== undefined) await this.context.onCallOutcome?.(failed, startedAt, error);
      await this.handleFailure(pending, attempt, error);
      return;
    }
    this.answeredCalls++;
    this.acceptedCalls++;
    await this.context.onCallOutcome?.(false, startedAt);
    await this.acceptAnswer(pending, answer);
  }

  /** A pause leaves the ops without a result, for a later run; a stop reports them unprocessed. */
  private stopBefore(ops: PlannedOp[], stop: StopDecision): void {
    if (stop.kind === 'pause') {
      this.paused = true;
      return;
    }
    this.stopped = stop;
    for (const op of ops) {
      this.finish(op, { status: 'unprocessed', errorCode: stop.code, error: stop.message });
    }
  }

  private async handleFailure(ops: PlannedOp[], attempt: number, error: unknown): Promise<void> {
    if (!(error instanceof AdminError)) throw error;
    const kind = classifyFailure(error);
    if (kind === 'permanent') {
      if (error.status === 413 && ops.length > 1) {
        this.stats.tooLargeAt = Math.min(this.stats.tooLargeAt ?? ops.length, ops.length);
      }
      await this.isolate(ops, error);
      return;
    }
    if (kind === 'ambiguous') for (const op of ops) this.uncertain.add(op.row);
    if (this.context.probe) {
      // the server still fails: the probe ends, the batch waits for the next one
      this.paused = true;
      return;
    }
    if (attempt >= this.context.retry.maxAttempts) {
      for (const op of ops) {
        this.finish(op, {
          status: 'unprocessed',
          errorCode: error.code,
          error: recordErrorMessage(error),
        });
      }
      return;
    }
    if (error.status === 429 && error.retryAfterMs !== undefined) {
      await this.context.onRateLimited?.(error.retryAfterMs);
    }
    await sleep(
      retryDelayMs(this.context.retry, attempt, error, this.context.random),
      this.context.signal,
    );
    if (kind === 'ambiguous') {
      // what landed of the whole call is read at once, before the call is sent again or split
      await this.prefind(ops.filter((op) => this.readsBeforeSend(op)));
    }
    if (kind === 'ambiguous' && ops.length > 1) {
      // a server that never answers one of these records (or answers 500 for it) must not sink
      // the others: halving is not a retry of the same call, so the halves keep the attempt
      // count; only a group sent again as it was spends one (the breaker stops a server that
      // fails everything)
      const middle = Math.ceil(ops.length / 2);
      this.stats.splits++;
      await this.send(ops.slice(0, middle), attempt);
      await this.send(ops.slice(middle), attempt);
      return;
    }
    this.stats.retries++;
    await this.send(ops, attempt + 1);
  }

  /** A permanent refusal: fail a lone record, or split the group to find the bad ones. */
  private async isolate(group: PlannedOp[], error: AdminError): Promise<void> {
    let ops = group;
    if (ops.length === 1) {
      // the refusal is about this record: nothing of the call was applied
      await this.failAlone(ops[0]!, error);
      return;
    }
    if (isConflict(error) && (await this.settleConflicts(ops))) return;
    const index = error.index;
    const named =
      index !== undefined && Number.isInteger(index) && index >= 0 && index < ops.length;
    if (!named && CALL_LEVEL_STATUSES.has(error.status ?? 0) && this.acceptedCalls === 0) {
      if (await this.refusedAsAWhole(ops, error)) return;
      ops = ops.filter((op) => !this.results.has(op.row));
      if (ops.length === 0) return;
    }
    // a partial server applied the records before the failing one; an atomic one, none
    await this.settleAppliedPrefix(ops, named ? index : ops.length);
    const open = (part: PlannedOp[]): PlannedOp[] => part.filter((op) => !this.results.has(op.row));
    if (named) {
      this.stats.splits++;
      await this.send(open(ops.slice(0, index)), 1);
      await this.send([ops[index]!], 1);
      await this.send(ops.slice(index + 1), 1);
      return;
    }
    const rest = open(ops);
    const middle = Math.ceil(rest.length / 2);
    if (rest.length > 1) this.stats.splits++;
    await this.send(rest.slice(0, middle), 1);
    await this.send(rest.slice(middle), 1);
  }

  /**
   * A 401, 403 or 405 for a whole call is likely about who sends it (read-only credentials),
   * not about a record. Until a write of the batch is accepted, the first and the last record
   * are tried alone; when both are refused the same way, the others are not tried one by one
   * (about two calls per record): they are reported unprocessed, for `porter retry` once the
   * cause is fixed.
   */
  private async refusedAsAWhole(ops: PlannedOp[], error: AdminError): Promise<boolean> {
    const refusedAlike = async (op: PlannedOp): Promise<boolean> => {
      await this.send([op], 1);
      return (
        this.results.get(op.row)?.status === 'failed' &&
        this.lastLoneRefusal?.status === error.status
      );
    };
    const first = ops[0]!;
    const last = ops[ops.length - 1]!;
    if (!(await refusedAlike(first)) || !(await refusedAlike(last))) return false;
    for (const op of ops.slice(1, -1)) {
      this.finish(op, {
        status: 'unprocessed',
        errorCode: recordErrorCode(error),
        error: `not sent alone: the admin server refused the whole call, and its first and last records alone, with ${error.status} (${recordErrorMessage(error)})`,
        id: op.existingId,
      });
    }
    return true;
  }

  /**
   * What a refused call applied is at most a prefix of it: nothing (an all-or-nothing server)
   * or the records before the bad one (a partial server). Walks the first `upTo` records in
   * order, looking each create or delete up, and stops at the first one not applied: neither
   * it nor any record after it was. Applied ones are finished as succeeded; updates are left
   * to be sent again, which is harmless. So an atomic server costs one read per refusal, not
   * one per record.
   */
  private async settleAppliedPrefix(ops: PlannedOp[], upTo: number): Promise<void> {
    for (let position = 0; position < upTo; position++) {
      const op = ops[position]!;
      if (UPDATE_ACTIONS.has(op.action)) continue;
      if (op.action === 'create' && !op.knownAbsent) {
        // found now, it could not be told from one that existed before: look before resending
        for (const later of ops.slice(position, upTo)) this.uncertain.add(later.row);
        return;
      }
      if (!(await this.settleIfApplied(op))) {
        this.uncertain.delete(op.row);
        return;
      }
    }
  }

  /**
   * "Already exists" for a call of several records: its creates the import saw absent are looked
   * up together. One the server holds is this import's own when an earlier call of it may have
   * created it (uncertain) or it holds exactly what this import would write, and fails
   * ALREADY_EXISTS otherwise, as it would alone; the others are sent again in one call. False
   * when every such create was looked up so before: the refusal is then isolated by splitting.
   */
  private async settleConflicts(ops: PlannedOp[]): Promise<boolean> {
    const creates = ops.filter(
      (op) => op.action === 'create' && op.knownAbsent && !this.conflictChecked.has(op.row),
    );
    if (creates.length === 0) return false;
    for (const op of creates) this.conflictChecked.add(op.row);
    const found = await this.findAll(creates);
    const idField = RESOURCES[this.context.resource].idField;
    for (const op of creates) {
      const record = found.get(op);
      if (!record) {
        // seen absent: certain again until a later call of it fails without an answer
        this.uncertain.delete(op.row);
        continue;
      }
      const own =
        this.uncertain.has(op.row) ||
        unheldFields(this.context.resource, record, op.payload).length === 0;
      this.finish(
        op,
        own
          ? { status: 'succeeded', id: record[idField] as string | number }
          : {
              status: 'failed',
              errorCode: 'ALREADY_EXISTS',
              error: `${op.key} already exists`,
              id: record[idField] as string | number,
            },
      );
    }
    const rest = ops.filter((op) => !this.results.has(op.row));
    // none found: the refusal is about something else; split as for any refusal
    if (rest.length === ops.length) return false;
    await this.send(rest, 1);
    return true;
  }

  private async failAlone(op: PlannedOp, error: AdminError): Promise<void> {
    this.lastLoneRefusal = error;
    const wasUncertain = this.uncertain.has(op.row);
    if (op.action === 'create' && op.knownAbsent && isConflict(error)) {
      // absent when this import looked, present now: an earlier attempt of this import may have
      // created it (its answer lost), or a second run of this batch (a worker that lost its
      // lock and ran on). Without such an uncertain call, it counts as this import's own only
      // when it holds exactly what this import would have written.
      const found = await this.find(op);
      if (
        found &&
        (wasUncertain || unheldFields(this.context.resource, found, op.payload).length === 0)
      ) {
        this.finish(op, {
          status: 'succeeded',
          id: found[RESOURCES[this.context.resource].idField] as string | number,
        });
        return;
      }
    }
    if (op.action === 'delete' && isNotFound(error) && wasUncertain) {
      this.finish(op, { status: 'succeeded', id: op.existingId });
      return;
    }
    this.finish(op, {
      status: 'failed',
      errorCode: recordErrorCode(error),
      error: recordErrorMessage(error),
      id: op.existingId,
    });
  }

  /** Whether an op's record is read on the server before it is sent (see reconcile). */
  private readsBeforeSend(op: PlannedOp): boolean {
    return this.uncertain.has(op.row) && !UPDATE_ACTIONS.has(op.action);
  }

  private readsFirst(ops: PlannedOp[]): boolean {
    return this.uncertain.size > 0 && ops.some((op) => this.readsBeforeSend(op));
  }

  /** For uncertain creates and deletes, asks the server what already happened. */
  private async reconcile(ops: PlannedOp[]): Promise<PlannedOp[]> {
    // nothing uncertain (every first run of a batch, as long as calls are answered)
    if (this.uncertain.size === 0) return ops;
    await this.prefind(ops.filter((op) => this.readsBeforeSend(op)));
    const pending: PlannedOp[] = [];
    for (const op of ops) {
      if (!this.readsBeforeSend(op)) {
        pending.push(op);
        continue;
      }
      if (await this.settleIfApplied(op)) continue;
      // seen as not applied: certain again until a later call of it fails without an answer
      this.uncertain.delete(op.row);
      pending.push(op);
    }
    return pending;
  }

  /**
   * Looks a create or delete up: when the server applied it (a create the planner saw absent
   * and finds now is this import's own; a delete whose record is gone), it is finished as
   * succeeded and true is returned.
   */
  private async settleIfApplied(op: PlannedOp): Promise<boolean> {
    const found = await this.find(op);
    if (op.action === 'create' && op.knownAbsent && found) {
      const idField = RESOURCES[this.context.resource].idField;
      this.finish(op, { status: 'succeeded', id: found[idField] as string | number });
      return true;
    }
    if (op.action === 'delete' && !found) {
      this.finish(op, { status: 'succeeded', id: op.existingId });
      return true;
    }
    return false;
  }

  /**
   * Reads the records of several ops at once (src/execute/settle-reads.ts) for their next look;
   * ops already read so, or a lone op, are left to be read when looked at.
   */
  private async prefind(ops: PlannedOp[]): Promise<void> {
    const open = ops.filter((op) => !this.prefound.has(op.row));
    if (open.length < 2) return;
    for (const [op, record] of await this.findAll(open)) this.prefound.set(op.row, record);
  }

  /** The server's records of these ops, read at once: in bulk, or one by one in parallel. */
  private async findAll(
    ops: PlannedOp[],
  ): Promise<Map<PlannedOp, Record<string, unknown> | undefined>> {
    const { lookup, resource, bulkSettleFrom } = this.context;
    const bulkBefore = lookup.bulkReads;
    const found = await readMany(ops, {
      resource,
      lookup,
      bulkFrom: bulkSettleFrom,
      readOne: (op) => this.readOne(op),
    });
    const bulk = lookup.bulkReads - bulkBefore;
    if (bulk > 0) {
      this.stats.reconcileReads += bulk;
      this.stats.bulkReads = (this.stats.bulkReads ?? 0) + bulk;
    }
    return found;
  }

  private async find(op: PlannedOp): Promise<Record<string, unknown> | undefined> {
    if (this.prefound.has(op.row)) {
      // read with its batch-mates just before: once only, a later look reads afresh
      const found = this.prefound.get(op.row);
      this.prefound.delete(op.row);
      return found;
    }
    return this.readOne(op);
  }

  private async readOne(op: PlannedOp): Promise<Record<string, unknown> | undefined> {
    this.stats.reconcileReads++;
    const { lookup, resource } = this.context;
    if (op.action === 'delete') {
      const id = op.existingId;
      if (resource === 'users') return lookup.userById(Number(id));
      if (resource === 'groups') return lookup.groupById(Number(id));
      return lookup.aclById(String(id));
    }
    return findFresh(resource, op.payload, lookup);
  }

  /**
   * A 2xx answer confirms the ops whose records it holds, matched by key. An op it leaves out
   * (a server that answers with only what it applied) is read back: what the server holds decides.
   */
  private async acceptAnswer(ops: PlannedOp[], answer: Record<string, unknown>[]): Promise<void> {
    const { resource } = this.context;
    const matches = matchAnswer(resource, ops, answer);
    for (let index = 0; index < ops.length; index++) {
      const op = ops[index]!;
      const record = matches[index];
      this.finish(
        op,
        record
          ? confirmedResult(resource, op, record)
          : readBackResult(resource, op, await this.find(op)),
      );
    }
  }

  private finish(op: PlannedOp, result: AnswerVerdict): void {
    this.results.set(
      op.row,
      decidedResult({
        row: op.row,
        line: op.line,
        key: op.key,
        action: op.action,
        status: result.status,
        id: result.id,
        errorCode: result.errorCode,
        error: result.error,
        attempts: this.attempts.get(op.row) ?? 0,
        changed: result.changed,
        changes: result.changes,
        warnings: result.warnings ?? (op.warnings.length > 0 ? op.warnings : undefined),
      }),
    );
  }
}
