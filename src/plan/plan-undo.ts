/**
 * Plans one batch of an undo: each record an import changed is read again (by id, or by key for
 * a record it deleted) and turned back: an update restored, a create deleted, a delete re-created.
 * A record changed on the server since that import wrote it is not touched (PORTER_PLAN_STALE)
 * unless the undo is forced.
 */
import type { WriteMethod } from '../admin/client.js';
import { AdminError, classifyFailure } from '../admin/errors.js';
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { unheldFields } from '../execute/answer-check.js';
import { recordErrorCode, recordErrorMessage } from '../execute/record-error.js';
import type { RecordAction, StagedRecord } from '../model/import.js';
import { mapConcurrent } from '../util/concurrency.js';
import { guardUserChange } from './admin-guard.js';
import { nameIds } from './describe-changes.js';
import type { DirectoryView } from './directory-view.js';
import { fingerprint } from './fingerprint.js';
import { mergeRecord } from './merge.js';
import {
  decidedResult,
  deleteOp,
  plannedOp,
  updateOp,
  type BatchPlan,
  type DecidedResult,
  type PlannedOp,
} from './planned-op.js';
import { writtenFingerprint, type UndoEntry } from './undo-entry.js';

export interface UndoPlanContext {
  resource: ResourceName;
  /** The undone import's allowAdmin: an undo never grants more than it could. */
  allowAdmin: boolean;
  /** Write records changed on the server since the undone import. @defaultValue false */
  force?: boolean;
  lookup: DirectoryView;
  /** Reads in flight at once. @defaultValue 8 */
  concurrency?: number;
  /** Rows an earlier run of this batch handed to the server (the send journal). */
  sentBefore?: ReadonlySet<number>;
  /** A plan to show (dry run) or to apply: every record gets the fingerprint of the record read. */
  planning?: 'dry-run' | 'apply';
}

/** The undo entry a staged record of an undo import carries. */
export function undoEntryOfStaged(staged: StagedRecord): UndoEntry {
  return staged.record.undo as UndoEntry;
}

type Planned = { op: PlannedOp } | { decided: DecidedResult };

/** Plans the undo of one batch; one op or decided result per staged record. */
export async function planUndoBatch(
  records: readonly StagedRecord[],
  context: UndoPlanContext,
): Promise<BatchPlan> {
  const planned = await mapConcurrent(records, context.concurrency ?? 8, async (staged) => {
    const entry = undoEntryOfStaged(staged);
    try {
      return await planUndoRecord(staged, entry, context);
    } catch (error) {
      if (!(error instanceof AdminError) || classifyFailure(error) !== 'permanent') throw error;
      return {
        decided: {
          row: staged.row,
          line: staged.line,
          key: entry.key,
          status: 'failed',
          errorCode: recordErrorCode(error),
          error: `lookup refused: ${recordErrorMessage(error)}`,
          attempts: 0,
        },
      } satisfies Planned;
    }
  });
  const plan: BatchPlan = { ops: [], decided: [] };
  for (const item of planned) {
    if ('op' in item) plan.ops.push(item.op);
    else plan.decided.push(item.decided);
  }
  return plan;
}

async function planUndoRecord(
  staged: StagedRecord,
  entry: UndoEntry,
  context: UndoPlanContext,
): Promise<Planned> {
  const { resource, lookup } = context;
  const descriptor = RESOURCES[resource];
  const current =
    entry.action === 'delete'
      ? await currentByKey(resource, entry.before ?? {}, lookup)
      : await currentById(resource, entry.id, lookup);
  const basis = context.planning ? fingerprint(current) : undefined;
  const base = { row: staged.row, line: staged.line, key: entry.key, basis };
  const currentId = current?.[descriptor.idField] as string | number | undefined;
  const decide = (
    action: RecordAction,
    result: Omit<DecidedResult, 'row' | 'line' | 'key' | 'action'>,
  ): Planned => ({
    decided: decidedResult({
      row: base.row,
      line: base.line,
      key: base.key,
      basis: base.basis,
      action,
      attempts: 0,
      ...result,
    }),
  });
  const stale = (action: RecordAction, why: string): Planned =>
    decide(action, {
      status: 'failed',
      errorCode: 'PORTER_PLAN_STALE',
      id: currentId,
      error: `not written: ${why} (row ${entry.row} there); pass --force to undo it anyway`,
    });
  const guard = (
    action: 'create' | 'update' | 'delete',
    record: Record<string, unknown>,
  ): Planned | undefined => {
    if (resource !== 'users') return undefined;
    const verdict = guardUserChange(action, record, current, context.allowAdmin);
    if (verdict.allowed) return undefined;
    return decide(action, {
      status: 'failed',
      errorCode: 'PORTER_ADMIN_GUARD',
      id: currentId,
      error: verdict.reason,
    });
  };
  const checked = entry.check ?? entry;
  const changedSince =
    current !== undefined &&
    writtenFingerprint(resource, current, checked.fields) !== checked.written;

  if (entry.action === 'create') {
    // undo of a create: delete the record it made
    if (resource === 'acls') {
      return decide('delete', {
        status: 'failed',
        errorCode: 'PORTER_UNDO_UNSUPPORTED',
        id: entry.id,
        error: `not undone: the admin interface cannot delete ACLs; remove ACL ${String(entry.id)} by hand`,
      });
    }
    if (!current) {
      // gone: deleted by an earlier run of this batch, or by someone else
      if (context.sentBefore?.has(staged.row)) {
        return decide('delete', { status: 'succeeded', id: entry.id, attempts: 1 });
      }
      return decide('delete', { status: 'skipped', error: 'not found; deleted already' });
    }
    if (changedSince && !context.force) {
      return stale('delete', 'the record changed on the server after the import created it');
    }
    const refused = guard('delete', {});
    if (refused) return refused;
    return {
      op: deleteOp(base, descriptor.idField, currentId, current),
    };
  }

  if (entry.action === 'delete' && !current) {
    // undo of a delete: the record again, with the fields it had; the server gives a new id
    const payload: Record<string, unknown> = { ...entry.before };
    delete payload[descriptor.idField];
    for (const field of descriptor.serviceFields) delete payload[field];
    const refused = guard('create', payload);
    if (refused) return refused;
    const method: WriteMethod = resource === 'acls' ? 'PUT' : 'POST';
    return { op: plannedOp(base, 'create', method, payload, true, []) };
  }

  if (!current) {
    return decide('update', {
      status: 'failed',
      errorCode: 'NOT_FOUND',
      error: `not written: the record was deleted on the server after the import updated it (row ${entry.row} there); nothing to restore`,
    });
  }
  // undo of an update: its fields back to their values before it; undo of a delete whose key
  // was taken since (forced): the record holding that key gets the deleted record's fields
  const restore =
    entry.action === 'delete'
      ? withoutIdentity(resource, entry.before ?? {})
      : restoredFields(entry, current);
  const { payload, changed, changes: merged } = mergeRecord(resource, current, restore);
  const holdsAlready =
    changed.length === 0 ||
    // a record re-created by an earlier undo: equal as far as the server reads fields back
    (entry.action === 'delete' && unheldFields(resource, current, restore).length === 0);
  if (holdsAlready) {
    if (entry.action === 'delete' && context.sentBefore?.has(staged.row)) {
      // re-created by an earlier run of this batch, whose answer was lost
      return decide('create', { status: 'succeeded', id: currentId, attempts: 1 });
    }
    // holds its values from before already (an earlier undo): nothing to write
    return decide('unchanged', { status: 'succeeded', id: currentId, changed: [] });
  }
  if (entry.action === 'delete' && !context.force) {
    return stale('create', 'a record with this key was created after the import deleted it');
  }
  if (changedSince && !context.force) {
    return stale('update', 'the record changed on the server after the import updated it');
  }
  const refused = guard('update', restore);
  if (refused) return refused;
  const changes = context.planning === 'dry-run' ? await nameIds(resource, merged, lookup) : merged;
  return { op: updateOp(base, { payload, currentId, changed, changes }) };
}

/**
 * The fields an update changed, with their values before it; a field it gave a first value goes
 * back to empty ("" or []), the closest the interface has to absent.
 */
function restoredFields(
  entry: UndoEntry,
  current: Record<string, unknown>,
): Record<string, unknown> {
  const restore: Record<string, unknown> = {};
  for (const field of entry.fields) {
    if (entry.before && Object.hasOwn(entry.before, field)) {
      restore[field] = entry.before[field];
    } else if (Array.isArray(current[field])) {
      restore[field] = [];
    } else if (typeof current[field] === 'string') {
      restore[field] = '';
    }
  }
  return restore;
}

function withoutIdentity(
  resource: ResourceName,
  record: Record<string, unknown>,
): Record<string, unknown> {
  const copy = { ...record };
  delete copy[RESOURCES[resource].idField];
  for (const field of RESOURCES[resource].serviceFields) delete copy[field];
  return copy;
}

async function currentById(
  resource: ResourceName,
  id: string | number,
  lookup: DirectoryView,
): Promise<Record<string, unknown> | undefined> {
  if (resource === 'users') return lookup.userById(Number(id));
  if (resource === 'groups') return lookup.groupById(Number(id));
  return lookup.aclById(String(id));
}

/** The record holding the deleted record's key now: same username, group name, or ACL name in its group. */
async function currentByKey(
  resource: ResourceName,
  before: Record<string, unknown>,
  lookup: DirectoryView,
): Promise<Record<string, unknown> | undefined> {
  if (resource === 'users') return lookup.user(String(before.username ?? ''));
  if (resource === 'groups') return lookup.group(String(before.name ?? ''));
  if (typeof before.groupId === 'number' && typeof before.name === 'string') {
    return lookup.aclByName(before.groupId, before.name);
  }
  return undefined;
}
