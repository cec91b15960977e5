/**
 * Turns one batch of staged records into the calls to make: reads what exists,
 * resolves names to ids, merges updates, applies the privilege guard, and decides
 * at once every record that needs no call (not found, unchanged, refused).
 *
 * A record whose every lookup the view read ahead (a snapshot's batch) is planned at once,
 * without a promise; the others wait for their reads, a few at a time.
 */
import type { WriteMethod } from '../admin/client.js';
import { AdminError, classifyFailure } from '../admin/errors.js';
import { RESOURCES } from '../admin/resources.js';
import { recordErrorCode, recordErrorMessage } from '../execute/record-error.js';
import type { StagedRecord } from '../model/import.js';
import { nameIds } from './describe-changes.js';
import { NOT_READ, type ReadAhead, type ReadAheadView } from './directory-view.js';
import { findCurrent } from './find-record.js';
import { fingerprint } from './fingerprint.js';
import { mapConcurrent } from '../util/concurrency.js';
import { guardUserChange } from './admin-guard.js';
import { mergeRecord } from './merge.js';
import { naturalKey } from './natural-key.js';
import type { PlanContext } from './plan-context.js';
import { planServerOnly, reactivates } from './plan-server-only.js';
import {
  decidedResult,
  deleteOp,
  plannedOp,
  updateOp,
  type BatchPlan,
  type DecidedResult,
  type OpBase,
  type Planned,
} from './planned-op.js';
import {
  resolveReferences,
  resolveReferencesNow,
  UnresolvedReferenceError,
} from './resolve-references.js';
import { ACTIVE, sparedBecause } from '../sync/sync-rules.js';
import { anchorAction, anchorRefusal, currentKeyOf } from './plan-anchor.js';

/** Plans one batch; records come back as ops or decided results, one per staged record. */
export async function planBatch(
  records: readonly StagedRecord[],
  context: PlanContext,
): Promise<BatchPlan> {
  await context.lookup.prefetch?.(prefetched(records, context));
  const planned = new Array<Planned>(records.length);
  const waiting: number[] = [];
  // a dry run names the ids of its changes, which reads on
  const view = context.planning === 'dry-run' ? undefined : context.lookup.readAhead?.();
  for (let index = 0; index < records.length; index++) {
    const staged = records[index]!;
    let now: Planned | undefined;
    try {
      now = view && planRecordNow(staged, context, view);
    } catch (error) {
      now = refusedRecord(staged, context, error);
    }
    if (now) planned[index] = now;
    else waiting.push(index);
  }
  await mapConcurrent(waiting, context.concurrency ?? 8, async (index) => {
    const staged = records[index]!;
    planned[index] = await planRecord(staged, context).catch((error: unknown) =>
      refusedRecord(staged, context, error),
    );
  });
  const firstRowOfKey = new Map<string, number>();
  const plan: BatchPlan = { ops: [], decided: [] };
  for (const item of planned) {
    if ('decided' in item) {
      plan.decided.push(item.decided);
      continue;
    }
    const earlier = firstRowOfKey.get(item.op.key);
    if (earlier !== undefined && item.op.method !== 'DELETE') {
      plan.decided.push(
        decidedResult({
          row: item.op.row,
          line: item.op.line,
          key: item.op.key,
          action: item.op.action,
          status: 'failed',
          errorCode: 'PORTER_ROW_INVALID',
          field: RESOURCES[context.resource].keyField,
          error: `duplicate of row ${earlier} in the same batch; merge the two rows`,
          attempts: 0,
        }),
      );
      continue;
    }
    firstRowOfKey.set(item.op.key, item.op.row);
    plan.ops.push(item.op);
  }
  return plan;
}

/** What a batch reads ahead: its records, and the keys records matched by anchor held. */
function prefetched(
  records: readonly StagedRecord[],
  context: PlanContext,
): Record<string, unknown>[] {
  const keyField = RESOURCES[context.resource].keyField;
  const held = records.flatMap((staged) =>
    staged.anchor?.key === undefined ? [] : [{ [keyField]: staged.anchor.key }],
  );
  const own = records.map((staged) => staged.record);
  return held.length === 0 ? own : [...own, ...held];
}

/** A record its lookups refused: decided failed; any other error is thrown on. */
function refusedRecord(staged: StagedRecord, context: PlanContext, error: unknown): Planned {
  const failed = (fields: Pick<DecidedResult, 'errorCode' | 'error' | 'field'>): Planned => ({
    decided: decidedResult({
      row: staged.row,
      line: staged.line,
      key: naturalKey(context.resource, staged.record),
      status: 'failed',
      attempts: 0,
      ...fields,
    }),
  });
  if (error instanceof AdminError && classifyFailure(error) === 'permanent') {
    // the server refuses to look this one record up (a key too long for a URL, …)
    return failed({
      errorCode: recordErrorCode(error),
      error: `lookup refused: ${recordErrorMessage(error)}`,
    });
  }
  if (error instanceof UnresolvedReferenceError) {
    return failed({
      errorCode: error.code,
      field: error.field,
      error: `field "${error.field}": ${error.message}`,
    });
  }
  throw error;
}

/** A record decided without a call, from its base and the decision. */
function decide(
  base: OpBase,
  warnings: string[],
  result: Omit<DecidedResult, 'row' | 'line' | 'key' | 'basis' | 'attempts'> &
    Partial<Pick<DecidedResult, 'attempts'>>,
): Planned {
  return {
    decided: decidedResult({
      row: base.row,
      line: base.line,
      key: base.key,
      basis: base.basis,
      action: result.action,
      status: result.status,
      id: result.id,
      errorCode: result.errorCode,
      error: result.error,
      field: result.field,
      attempts: result.attempts ?? 0,
      changed: result.changed,
      warnings: warnings.length ? warnings : undefined,
    }),
  };
}

/** The upload's record as planning takes it: an id it carries is left out, but an ACL's. */
function uploadOf(
  staged: StagedRecord,
  context: PlanContext,
  warnings: string[],
): Record<string, unknown> {
  const { resource, mode } = context;
  const { idField } = RESOURCES[resource];
  // the staged record is never changed: resolving references gives back a copy to plan with
  let upload = staged.record;
  if (upload[idField] !== undefined && (resource !== 'acls' || mode === 'create')) {
    // ids belong to one instance: records are matched by name, never by a carried id,
    // except an ACL update or upsert, whose id is its key
    upload = { ...upload };
    delete upload[idField];
    if (resource === 'acls')
      warnings.push('id ignored on create; the ACL is matched by groupId and name');
  }
  return upload;
}

/** Whether planning this record asks for a server key that looks like its own. */
function asksLookalike(
  context: PlanContext,
  record: Record<string, unknown>,
  current: Record<string, unknown> | undefined,
): boolean {
  const { mode, resource } = context;
  if (current || context.allowLookalike || mode === 'delete' || mode === 'update') return false;
  return !(resource === 'acls' && record.id !== undefined);
}

async function planRecord(staged: StagedRecord, context: PlanContext): Promise<Planned> {
  if (staged.serverOnly && context.sync) return planServerOnly(staged, context, context.sync);
  const { resource, mode, lookup } = context;
  const warnings = staged.warnings ? [...staged.warnings] : [];
  const upload = uploadOf(staged, context, warnings);
  const record = mode === 'delete' ? upload : await resolveReferences(resource, upload, lookup);
  const key = naturalKey(resource, record);
  // creates look first too: a record that exists already fails ALREADY_EXISTS without a call,
  // and a create found after an unanswered call is known to be this import's own
  const current =
    staged.anchor?.key === undefined
      ? await findCurrent(resource, record, lookup)
      : resource === 'users'
        ? await lookup.user(staged.anchor.key)
        : await lookup.group(staged.anchor.key);
  const lookalike = asksLookalike(context, record, current)
    ? await lookup.lookalikeOf?.(key)
    : undefined;
  const planned = decideRecord(staged, context, warnings, record, key, current, lookalike);
  if (context.planning === 'dry-run' && 'op' in planned && planned.op.changes) {
    // a dry run shows the ids a list change adds and removes by their names
    planned.op.changes = await nameIds(resource, planned.op.changes, lookup);
  }
  return planned;
}

/** planRecord from what the view read ahead; undefined when a lookup must wait for a read. */
function planRecordNow(
  staged: StagedRecord,
  context: PlanContext,
  view: ReadAheadView,
): Planned | undefined {
  const { resource, mode } = context;
  if ((staged.serverOnly && context.sync) || resource === 'acls') return undefined;
  const warnings = staged.warnings ? [...staged.warnings] : [];
  const upload = uploadOf(staged, context, warnings);
  const record = mode === 'delete' ? upload : resolveReferencesNow(resource, upload, view);
  if (record === NOT_READ) return undefined;
  const key = naturalKey(resource, record);
  const held = currentKeyOf(resource, { ...staged, record });
  const current: ReadAhead<Record<string, unknown>> =
    resource === 'users' ? view.user(held) : view.group(held);
  if (current === NOT_READ) return undefined;
  const lookalike = asksLookalike(context, record, current) ? view.lookalikeOf(key) : undefined;
  if (lookalike === NOT_READ) return undefined;
  return decideRecord(staged, context, warnings, record, key, current, lookalike);
}

/**
 * What to do with a record, once it is read: `record` with its references resolved (planning's
 * own copy, which becomes a create's payload), the server's `current` one, and a server key that
 * looks like its key, when asksLookalike.
 */
function decideRecord(
  staged: StagedRecord,
  context: PlanContext,
  warnings: string[],
  record: Record<string, unknown>,
  key: string,
  current: Record<string, unknown> | undefined,
  lookalike: string | undefined,
): Planned {
  const { resource, mode } = context;
  const descriptor = RESOURCES[resource];
  const basis = context.planning ? fingerprint(current) : undefined;
  const base: OpBase = { row: staged.row, line: staged.line, key, basis };
  const currentId = current?.[descriptor.idField] as string | number | undefined;
  const sentBefore = context.sentBefore?.has(staged.row) === true;
  // a sync leaves some records alone even when its file names them
  const spared = context.sync ? sparedBecause(context.sync.rules, key, current) : undefined;
  if (context.sync && reactivates(resource, staged, current, context.sync)) {
    record.status = ACTIVE;
  }
  const anchored = mode === 'delete' ? undefined : context.anchor;
  const refusal = anchored && anchorRefusal(resource, staged, anchored, current);
  if (refusal) {
    return decide(base, warnings, {
      action: current ? 'update' : 'create',
      status: 'failed',
      errorCode: refusal.errorCode,
      field: 'anchor',
      id: currentId,
      error: refusal.error,
    });
  }

  if (mode === 'delete') {
    if (!current) {
      if (sentBefore) {
        return decide(base, warnings, { action: 'delete', status: 'succeeded', attempts: 1 });
      }
      return decide(base, warnings, {
        action: 'delete',
        status: 'skipped',
        error: 'not found; nothing to delete',
      });
    }
    const refused = guard(context, base, warnings, 'delete', record, current);
    if (refused) return refused;
    return { op: deleteOp(base, descriptor.idField, currentId, current, warnings) };
  }

  if (current && mode === 'create') {
    if (sentBefore) {
      return decide(base, warnings, {
        action: 'create',
        status: 'succeeded',
        id: currentId,
        attempts: 1,
      });
    }
    return decide(base, warnings, {
      action: 'create',
      status: 'failed',
      errorCode: 'ALREADY_EXISTS',
      id: currentId,
      error: `${key} already exists`,
    });
  }
  if (!current && (mode === 'update' || (resource === 'acls' && record.id !== undefined))) {
    return decide(base, warnings, {
      action: 'update',
      status: 'failed',
      errorCode: 'NOT_FOUND',
      error: `${key} does not exist`,
    });
  }

  if (!current) {
    const refused = guard(context, base, warnings, 'create', record, undefined);
    if (refused) return refused;
    if (lookalike !== undefined) {
      return decide(base, warnings, {
        action: 'create',
        status: 'failed',
        errorCode: 'PORTER_KEY_LOOKALIKE',
        field: descriptor.keyField,
        error: `${key} looks like ${lookalike}, which exists on the admin server (case, width or look-alike letters); not created. Fix the key, or pass --allow-lookalike`,
      });
    }
    if (spared) {
      return decide(base, warnings, {
        action: 'create',
        status: 'skipped',
        id: currentId,
        error: `in the file, but ${spared}`,
      });
    }
    // planning's own copy of the record is the payload
    const payload = record;
    for (const field of descriptor.serviceFields) if (field in payload) delete payload[field];
    if (descriptor.idField in payload) delete payload[descriptor.idField];
    const method: WriteMethod = mode === 'create' && resource !== 'acls' ? 'POST' : 'PUT';
    // a dry run shows what a create would write, field by field (mapped and computed values)
    const changes =
      context.planning === 'dry-run'
        ? Object.entries(payload).map(([field, to]) => ({ field, to }))
        : undefined;
    return { op: plannedOp(base, 'create', method, payload, true, warnings, { changes }) };
  }

  const refused = guard(context, base, warnings, 'update', record, current);
  if (refused) return refused;
  const { payload, changed, changes } = mergeRecord(resource, current, record);
  if (changed.length === 0) {
    return decide(base, warnings, {
      action: 'unchanged',
      status: 'succeeded',
      id: currentId,
      changed: [],
    });
  }
  if (spared) {
    return decide(base, warnings, {
      action: 'update',
      status: 'skipped',
      id: currentId,
      error: `in the file, but ${spared}`,
    });
  }
  const op = updateOp(base, { payload, currentId, changed, changes, warnings });
  op.action = (anchored && anchorAction(resource, staged, anchored, current, payload)) ?? op.action;
  return { op };
}

/** The privilege guard: a refused user change is decided here, never sent. */
function guard(
  context: PlanContext,
  base: OpBase,
  warnings: string[],
  action: 'create' | 'update' | 'delete',
  record: Record<string, unknown>,
  existing: Record<string, unknown> | undefined,
): Planned | undefined {
  if (context.resource !== 'users') return undefined;
  const verdict = guardUserChange(action, record, existing, context.allowAdmin);
  if (verdict.allowed) return undefined;
  const currentId = existing?.[RESOURCES.users.idField] as string | number | undefined;
  return decide(base, warnings, {
    action,
    status: 'failed',
    errorCode: 'PORTER_ADMIN_GUARD',
    field: action === 'delete' ? undefined : 'type',
    id: action === 'update' ? currentId : undefined,
    error: verdict.reason,
  });
}
