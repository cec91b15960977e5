/**
 * Checks a write answer against its request. Some servers answer a multi-record call with 200
 * and only the records they applied, so answer records are matched to request records by key,
 * never by position or count, and a record is compared with what was sent: a field the server
 * dropped is reported, a field it is known to read back otherwise is not.
 */
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { mergeRecord } from '../plan/merge.js';
import { readsBackOtherwise } from '../admin/read-back.js';
import { matchKey } from '../plan/natural-key.js';
import type { DecidedResult, PlannedOp } from '../plan/planned-op.js';

type AdminRecord = Record<string, unknown>;

/** What answer checking decides of one op; the batch adds row, key, action and attempts. */
export type AnswerVerdict = Pick<DecidedResult, 'status'> &
  Partial<Pick<DecidedResult, 'id' | 'errorCode' | 'error' | 'changed' | 'changes' | 'warnings'>>;

/**
 * The answer record confirming each op, by the op's place (undefined: none). An op is matched by
 * its id (updates, deletes) or its key (username, group name, ACL groupId and name); a record
 * carrying another id than the op's never confirms it, and each answer record confirms at most
 * one op. Unmatched answer records are ignored.
 */
export function matchAnswer(
  resource: ResourceName,
  ops: readonly PlannedOp[],
  answer: readonly AdminRecord[],
): (AdminRecord | undefined)[] {
  return inOrder(resource, ops, answer) ?? byLabel(resource, ops, answer);
}

/**
 * The usual answer: each record in its op's place, with its key and id. Then every op's first
 * fitting record by id or key is the one in its place (no two ops of a call but deletes share a
 * key), as byLabel would find; undefined otherwise.
 */
function inOrder(
  resource: ResourceName,
  ops: readonly PlannedOp[],
  answer: readonly AdminRecord[],
): AdminRecord[] | undefined {
  if (answer.length !== ops.length) return undefined;
  const idField = RESOURCES[resource].idField;
  for (let index = 0; index < ops.length; index++) {
    const op = ops[index]!;
    const record = answer[index]!;
    if (op.action === 'delete' || matchKey(resource, record) !== matchKey(resource, op.payload)) {
      return undefined;
    }
    if (op.existingId !== undefined && idOf(record, idField) !== String(op.existingId)) {
      return undefined;
    }
  }
  return answer as AdminRecord[];
}

/** Any answer: its records indexed by id and key, each op taking its first fitting one. */
function byLabel(
  resource: ResourceName,
  ops: readonly PlannedOp[],
  answer: readonly AdminRecord[],
): (AdminRecord | undefined)[] {
  const idField = RESOURCES[resource].idField;
  // answer records by id and by key: one record each, a list only where several share one
  const byId = new Map<string, Candidates>();
  const byKey = new Map<string, Candidates>();
  for (const record of answer) {
    const id = idOf(record, idField);
    if (id !== undefined) addCandidate(byId, id, record);
    addCandidate(byKey, matchKey(resource, record), record);
  }
  const used = new Set<AdminRecord>();
  return ops.map((op) => {
    const opId = op.existingId === undefined ? undefined : String(op.existingId);
    // a delete carries only the id: its key is the one the upload named
    const key = op.action === 'delete' ? op.key : matchKey(resource, op.payload);
    const record =
      (opId === undefined ? undefined : pick(byId.get(opId), used, idField, opId)) ??
      pick(byKey.get(key), used, idField, opId);
    if (record) used.add(record);
    return record;
  });
}

/** The answer records under one label: one, or several. */
type Candidates = AdminRecord | AdminRecord[];

function addCandidate(index: Map<string, Candidates>, label: string, record: AdminRecord): void {
  const known = index.get(label);
  if (known === undefined) index.set(label, record);
  else if (Array.isArray(known)) known.push(record);
  else index.set(label, [known, record]);
}

function idOf(record: AdminRecord, idField: string): string | undefined {
  const id = record[idField];
  return id === undefined || id === null ? undefined : String(id);
}

/**
 * The first candidate not used yet that may confirm an op with this id: a record carrying
 * another id never does.
 */
function pick(
  candidates: Candidates | undefined,
  used: ReadonlySet<AdminRecord>,
  idField: string,
  opId: string | undefined,
): AdminRecord | undefined {
  if (candidates === undefined) return undefined;
  const fits = (record: AdminRecord): boolean => {
    if (used.has(record)) return false;
    const id = idOf(record, idField);
    return opId === undefined || id === undefined || id === opId;
  };
  if (!Array.isArray(candidates)) return fits(candidates) ? candidates : undefined;
  return candidates.find(fits);
}

/** An op its answer record confirms: succeeded, with a warning per field the server dropped. */
export function confirmedResult(
  resource: ResourceName,
  op: PlannedOp,
  answered: AdminRecord,
): AnswerVerdict {
  const id =
    (answered[RESOURCES[resource].idField] as string | number | undefined) ?? op.existingId;
  const dropped = op.action === 'delete' ? [] : droppedFields(resource, op.payload, answered);
  const done = { status: 'succeeded' as const, id, changed: op.changed, changes: op.changes };
  if (dropped.length === 0) return done;
  const warnings = dropped.map((field) => `field "${field}" sent but not in the answer`);
  return { ...done, warnings: [...op.warnings, ...warnings] };
}

/**
 * An op its answer left out was not confirmed: it succeeded only when the record read back shows
 * it applied (a create or update found with the values sent, a delete found gone), with the id
 * read back; otherwise it failed, ADMIN_NOT_APPLIED.
 */
export function readBackResult(
  resource: ResourceName,
  op: PlannedOp,
  found: AdminRecord | undefined,
): AnswerVerdict {
  const notApplied = (reason: string, id: string | number | undefined): AnswerVerdict => ({
    status: 'failed',
    errorCode: 'ADMIN_NOT_APPLIED',
    error: `left out of the admin server's answer, and ${reason} when read back`,
    id,
  });
  if (op.action === 'delete') {
    return found
      ? notApplied('still there', op.existingId)
      : { status: 'succeeded', id: op.existingId };
  }
  if (!found) return notApplied('not found', op.existingId);
  const id = found[RESOURCES[resource].idField] as string | number | undefined;
  const unheld = unheldFields(resource, found, op.payload);
  if (unheld.length > 0) return notApplied(`holding other values in ${unheld.join(', ')}`, id);
  return { status: 'succeeded', id, changed: op.changed, changes: op.changes };
}

/**
 * Fields sent with a value but absent from the answer record, as paths (`substitutionMap.key`
 * for a key of an object field). Empty values, the id and fields known to read back otherwise
 * are not looked at: an answer may leave out strings the request did not carry (spec 2.3).
 */
export function droppedFields(
  resource: ResourceName,
  sent: AdminRecord,
  answered: AdminRecord,
): string[] {
  const idField = RESOURCES[resource].idField;
  const dropped: string[] = [];
  for (const field of Object.keys(sent)) {
    const value = sent[field];
    if (field === idField || readsBackOtherwise(resource, field, value)) continue;
    collectDropped(field, value, answered, field, dropped);
  }
  return dropped;
}

function collectDropped(
  field: string,
  value: unknown,
  answered: AdminRecord,
  path: string,
  dropped: string[],
): void {
  if (isEmpty(value)) return;
  if (!Object.hasOwn(answered, field)) {
    dropped.push(path);
    return;
  }
  const echoed = answered[field];
  if (isObject(value) && isObject(echoed)) {
    for (const [key, inner] of Object.entries(value))
      collectDropped(key, inner, echoed, `${path}.${key}`, dropped);
  }
}

/**
 * Payload fields a record read back does not hold as sent, leaving out the fields known to read
 * back otherwise; empty when it holds the payload as far as can be told.
 */
export function unheldFields(
  resource: ResourceName,
  found: AdminRecord,
  payload: AdminRecord,
): string[] {
  const { changed } = mergeRecord(resource, found, payload);
  return changed.filter((field) => !readsBackOtherwise(resource, field, payload[field]));
}

/** A sent value whose absence loses nothing: undefined, null, "", [] or {}. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

function isObject(value: unknown): value is AdminRecord {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
