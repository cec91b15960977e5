/**
 * Planning a record the producer matched by anchor (src/anchor/anchor-rows.ts): the DAM record
 * it matched is read again and must still be the one (holding the anchor, or none for a join),
 * and the write is named for what it does: `adopt`, `rename`, `reactivate`.
 */
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { readAnchor } from '../anchor/anchor-field.js';
import { AnchorIndex } from '../anchor/anchor-index.js';
import type { RecordAction, StagedRecord } from '../model/import.js';
import { naturalKey } from './natural-key.js';
import { LOCKED, ACTIVE } from '../sync/sync-rules.js';

export interface AnchorPlanContext {
  /** The substitutionMap key or description tag anchors are kept under. */
  key: string;
  /** Anchors several rows carry → their rows: each such row fails. */
  twice?: Record<string, number[]>;
}

/** The key the record's DAM record is read by: the one it held when matched, else its own. */
export function currentKeyOf(resource: ResourceName, staged: StagedRecord): string {
  return staged.anchor?.key ?? naturalKey(resource, staged.record);
}

/** Why the record cannot be planned as matched, or undefined when it can. */
export function anchorRefusal(
  resource: ResourceName,
  staged: StagedRecord,
  context: AnchorPlanContext,
  current: Record<string, unknown> | undefined,
): { errorCode: string; error: string } | undefined {
  const anchor = staged.anchor;
  if (anchor === undefined) return undefined;
  const rows = context.twice?.[anchor.value];
  if (rows !== undefined) {
    return {
      errorCode: 'PORTER_ANCHOR_CONFLICT',
      error: `anchor ${anchor.value} is carried by rows ${rows.join(' and ')}: each of them fails; keep one row per person`,
    };
  }
  const held = current === undefined ? undefined : readAnchor(resource, current, context.key);
  const describe = (record: Record<string, unknown>): string =>
    AnchorIndex.of(resource, [], context.key).describe(record);
  if (anchor.match === 'new') {
    if (current === undefined || held === anchor.value) return undefined;
    return {
      errorCode: 'PORTER_ANCHOR_CONFLICT',
      error: `${naturalKey(resource, staged.record)} cannot be created: it is held by ${describe(current)}`,
    };
  }
  const stillThere =
    current !== undefined &&
    (held === anchor.value || (anchor.match === 'joined' && held === undefined)) &&
    (anchor.id === undefined || current[RESOURCES[resource].idField] === anchor.id);
  if (stillThere) return undefined;
  return {
    errorCode: 'PORTER_PLAN_STALE',
    error: `the DAM record ${anchor.key ?? ''} matched by anchor ${anchor.value} changed since the upload was read; import again`,
  };
}

/** The name of an update of a record matched by anchor, or undefined for a plain update. */
export function anchorAction(
  resource: ResourceName,
  staged: StagedRecord,
  context: AnchorPlanContext,
  current: Record<string, unknown>,
  payload: Record<string, unknown>,
): RecordAction | undefined {
  if (staged.anchor === undefined) return undefined;
  if (readAnchor(resource, current, context.key) === undefined) return 'adopt';
  const keyField = RESOURCES[resource].keyField;
  if (payload[keyField] !== current[keyField]) return 'rename';
  if (resource === 'users' && current.status === LOCKED && payload.status === ACTIVE) {
    return 'reactivate';
  }
  return undefined;
}
