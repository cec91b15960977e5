/** What a plan is made of: the calls to make (ops) and the records decided without a call. */
import type { WriteMethod } from '../admin/client.js';
import type { FieldChange, RecordAction, RecordResult } from '../model/import.js';

/** One record's part in a multi-record call. */
export interface PlannedOp {
  row: number;
  key: string;
  action: RecordAction;
  method: WriteMethod;
  payload: Record<string, unknown>;
  /** Id of the record this op updates or deletes. */
  existingId?: string | number;
  /** The planner saw that no record with this key existed (a create after a lookup). */
  knownAbsent: boolean;
  changed?: string[];
  changes?: FieldChange[];
  /** Fingerprint of the record planned against (plans and their application only). */
  basis?: string;
  /**
   * The record as it was before this op, kept so that the import can be undone: always for a
   * delete; for an update only when it carries no `changes` (they hold the values replaced).
   */
  before?: Record<string, unknown>;
  warnings: string[];
}

/** The part of an op every planner fills the same way: where it came from. */
export type OpBase = Pick<PlannedOp, 'row' | 'key' | 'basis'> & { line?: number };

/** A DELETE of the record `current`, which is kept for undo. */
export function deleteOp(
  base: OpBase,
  idField: string,
  currentId: string | number | undefined,
  current: Record<string, unknown>,
  warnings: string[] = [],
): PlannedOp {
  return {
    ...base,
    action: 'delete',
    method: 'DELETE',
    payload: { [idField]: currentId },
    existingId: currentId,
    knownAbsent: false,
    before: current,
    warnings,
  };
}

/** A PUT of the merged `payload` over the record `currentId`. */
export function updateOp(
  base: OpBase,
  update: {
    payload: Record<string, unknown>;
    currentId: string | number | undefined;
    changed: string[];
    changes: FieldChange[];
    warnings?: string[];
  },
): PlannedOp {
  return {
    ...base,
    action: 'update',
    method: 'PUT',
    payload: update.payload,
    existingId: update.currentId,
    knownAbsent: false,
    changed: update.changed,
    changes: update.changes,
    warnings: update.warnings ?? [],
  };
}

/** A record decided without a call; the caller adds `input`. */
export type DecidedResult = Omit<RecordResult, 'input'>;

export interface BatchPlan {
  ops: PlannedOp[];
  decided: DecidedResult[];
}

export type Planned = { op: PlannedOp } | { decided: DecidedResult };
