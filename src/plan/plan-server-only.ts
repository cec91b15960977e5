/**
 * Planning the records a sync adds to a plan (planBatch asks this for them): a server record its
 * file leaves out becomes a lock, a delete or a skip with its reason; a locked user its file
 * names is unlocked unless the file says otherwise. The sync's rules come from src/sync.
 */
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import type { StagedRecord } from '../model/import.js';
import { decideMissing, LOCKED } from '../sync/sync-rules.js';
import { findCurrent } from './find-record.js';
import { fingerprint } from './fingerprint.js';
import { mergeRecord } from './merge.js';
import { naturalKey } from './natural-key.js';
import type { PlanContext, SyncPlanContext } from './plan-context.js';
import { decidedResult, deleteOp, plannedOp, type Planned } from './planned-op.js';

/** Plans a server record the file leaves out. */
export async function planServerOnly(
  staged: StagedRecord,
  context: PlanContext,
  sync: SyncPlanContext,
): Promise<Planned> {
  const { resource, lookup } = context;
  const descriptor = RESOURCES[resource];
  const key = naturalKey(resource, staged.record);
  const current = await findCurrent(resource, staged.record, lookup);
  const basis = context.planning ? fingerprint(current) : undefined;
  const action = sync.rules.missing === 'delete' ? 'delete' : 'lock';
  const base = { row: staged.row, key, basis };
  if (!current) {
    return {
      decided: decidedResult({
        ...base,
        action,
        status: 'skipped',
        attempts: 0,
        error: 'not in the file, and no longer on the server; nothing to do',
      }),
    };
  }
  const currentId = current[descriptor.idField] as string | number | undefined;
  const decision = decideMissing(sync.rules, key, current, staged.serverOnly?.lookalikeOf);
  if (decision.kind === 'spared') {
    return {
      decided: decidedResult({
        row: base.row,
        key,
        basis,
        action,
        status: 'skipped',
        attempts: 0,
        id: currentId,
        error: decision.reason,
      }),
    };
  }
  if (decision.kind === 'delete') {
    return { op: deleteOp(base, descriptor.idField, currentId, current) };
  }
  const { payload, changed, changes } = mergeRecord(resource, current, {
    [descriptor.keyField]: key,
    status: LOCKED,
  });
  return {
    op: plannedOp(base, 'lock', 'PUT', payload, false, [], {
      existingId: currentId,
      changed,
      changes,
    }),
  };
}

/**
 * Whether a locked user the file names is made active again: yes, unless the file carries a
 * status column (then its value, or an empty cell leaving the status as it is, wins).
 */
export function reactivates(
  resource: ResourceName,
  staged: StagedRecord,
  current: Record<string, unknown> | undefined,
  sync: SyncPlanContext,
): boolean {
  if (resource !== 'users' || current?.status !== LOCKED) return false;
  if (staged.record.status !== undefined) return false;
  const columns = sync.mappingColumns ?? {};
  return !Object.keys(staged.input).some((column) => (columns[column] ?? column) === 'status');
}
