/** What a plan is made of: the calls to make (ops) and the records decided without a call. */
import type { WriteMethod } from '../admin/client.js';
import type { FieldChange, RecordAction, RecordResult } from '../model/import.js';

/**
 * One record's part in a multi-record call. Ops and decided results are made by the functions
 * below, every field in place and in one order: an object literal that spreads another and goes
 * on with more fields takes V8's slow path (about a microsecond each), and one shape keeps the
 * code that reads them fast.
 */
export interface PlannedOp {
  row: number;
  /** The record's line in its upload. */
  line?: number;
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

/** What an op may carry beside what every op has. */
export interface OpExtras {
  existingId?: string | number;
  changed?: string[];
  changes?: FieldChange[];
  before?: Record<string, unknown>;
}

const NO_EXTRAS: OpExtras = {};

/** An op with every field in place (see PlannedOp). */
export function plannedOp(
  base: OpBase,
  action: RecordAction,
  method: WriteMethod,
  payload: Record<string, unknown>,
  knownAbsent: boolean,
  warnings: string[],
  extras: OpExtras = NO_EXTRAS,
): PlannedOp {
  return {
    row: base.row,
    line: base.line,
    key: base.key,
    action,
    method,
    payload,
    existingId: extras.existingId,
    knownAbsent,
    changed: extras.changed,
    changes: extras.changes,
    basis: base.basis,
    before: extras.before,
    warnings,
  };
}

/** A DELETE of the record `current`, which is kept for undo. */
export function deleteOp(
  base: OpBase,
  idField: string,
  currentId: string | number | undefined,
  current: Record<string, unknown>,
  warnings: string[] = [],
): PlannedOp {
  return plannedOp(base, 'delete', 'DELETE', { [idField]: currentId }, false, warnings, {
    existingId: currentId,
    before: current,
  });
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
  return plannedOp(base, 'update', 'PUT', update.payload, false, update.warnings ?? [], {
    existingId: update.currentId,
    changed: update.changed,
    changes: update.changes,
  });
}

/** A record decided without a call; the caller adds `input`. */
export type DecidedResult = Omit<RecordResult, 'input'>;

/** A decided result with every field in place and in one order (see PlannedOp). */
export function decidedResult(fields: DecidedResult): DecidedResult {
  return {
    row: fields.row,
    line: fields.line,
    sourceRow: fields.sourceRow,
    key: fields.key,
    action: fields.action,
    status: fields.status,
    id: fields.id,
    errorCode: fields.errorCode,
    error: fields.error,
    field: fields.field,
    attempts: fields.attempts,
    changed: fields.changed,
    changes: fields.changes,
    basis: fields.basis,
    warnings: fields.warnings,
    serverOnly: fields.serverOnly,
  };
}

export interface BatchPlan {
  ops: PlannedOp[];
  decided: DecidedResult[];
}

export type Planned = { op: PlannedOp } | { decided: DecidedResult };
