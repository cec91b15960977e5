/**
 * What an import keeps of each record it changed, so that it can be undone: the record's id, the
 * values it replaced (an update: the changed fields; a delete: the whole record), and a
 * fingerprint of what it wrote, which tells an undo whether the record changed since.
 */
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { readsBackOtherwise } from '../admin/read-back.js';
import type { RecordResult } from '../model/import.js';
import { decodeCompact, encodeCompact } from '../snapshot/record-codec.js';
import { ABSENT, fingerprintOfJson, stableJson } from './fingerprint.js';
import { mergeRecord } from './merge.js';
import type { PlannedOp } from './planned-op.js';

/** What one import did to one record, and what it replaced. */
export interface UndoEntry {
  /** The record's row in the import that changed it. */
  row: number;
  /** What that import did. */
  action: 'create' | 'update' | 'delete';
  /** The record's id on the server (a create: the id it got). */
  id: string | number;
  /** Natural key (username, group name, ACL id or groupId:name). */
  key: string;
  /** Fields the fingerprint covers: those an update changed, those a create wrote; none for a delete. */
  fields: string[];
  /** Fingerprint of those fields as written (`absent` for a delete). */
  written: string;
  /** An update: the changed fields' values before it (a field it gave a value first is left out); a delete: the whole record. */
  before?: Record<string, unknown>;
  /**
   * The record as the import's last change of it left it, when that was a later change than
   * this entry's (entries folded by undo-fold.ts): what "changed since" is checked against.
   */
  check?: { fields: string[]; written: string };
}

/** The entry of an op the server applied; undefined for anything that changed nothing. */
export function undoEntryOf(
  resource: ResourceName,
  op: PlannedOp,
  result: Pick<RecordResult, 'status' | 'id'>,
): UndoEntry | undefined {
  if (result.status !== 'succeeded') return undefined;
  const idField = RESOURCES[resource].idField;
  // an update is any PUT of an existing record, whatever it is called (a lock is an update of status)
  if (op.method === 'PUT' && op.action !== 'create' && op.existingId !== undefined) {
    // an op planned with the record it overwrites but no field changes: derived from the two
    const changes =
      op.changes ?? (op.before ? mergeRecord(resource, op.before, op.payload).changes : []);
    if (changes.length === 0) return undefined;
    const fields = changes.map((change) => change.field);
    const before: Record<string, unknown> = {};
    for (const change of changes) if (change.from !== undefined) before[change.field] = change.from;
    return {
      row: op.row,
      action: 'update',
      id: op.existingId,
      key: op.key,
      fields,
      written: writtenFingerprint(resource, op.payload, fields),
      before,
    };
  }
  if (op.action === 'create') {
    const id = result.id ?? op.existingId;
    if (id === undefined) return undefined;
    const fields = Object.keys(op.payload).filter((field) => field !== idField);
    return {
      row: op.row,
      action: 'create',
      id,
      key: op.key,
      fields,
      written: writtenFingerprint(resource, op.payload, fields),
    };
  }
  if (op.action === 'delete' && op.before && op.existingId !== undefined) {
    return {
      row: op.row,
      action: 'delete',
      id: op.existingId,
      key: op.key,
      fields: [],
      written: ABSENT,
      before: op.before,
    };
  }
  return undefined;
}

/**
 * Fingerprint of these fields of a record, read the way the server reads them back: empty values
 * ("", null, [], {}) count as absent, lists of names or ids as sets, and fields the server never
 * reads back as written (a user's position and primaryGroup, …) are left out.
 */
export function writtenFingerprint(
  resource: ResourceName,
  record: Record<string, unknown> | undefined,
  fields: readonly string[],
): string {
  if (record === undefined) return ABSENT;
  const sorted = sortedCopy(fields);
  // the object of those fields, its keys in sorted order: when its values are plain (text,
  // numbers, flags, lists of them) and no key is a number, its JSON is stableJson's text of it
  const view: Record<string, unknown> = {};
  let plain = true;
  for (let index = 0; index < sorted.length; index++) {
    const field = sorted[index]!;
    // a field given twice is one member; `__proto__` would be no member of the object at all
    if (field === sorted[index - 1] || field === '__proto__') continue;
    const value = record[field];
    if (isEmpty(value) || readsBackOtherwise(resource, field, value)) continue;
    if (Array.isArray(value) && value.every(isScalar)) {
      view[field] = [...value].sort();
    } else {
      view[field] = value;
      if (!isScalar(value)) plain = false;
    }
    if (DIGITS.test(field)) plain = false;
  }
  return fingerprintOfJson(plain ? JSON.stringify(view) : stableJson(view));
}

/** A key JSON.stringify would write before the others, whatever its place. */
const DIGITS = /^\d+$/;

/** One entry as Redis keeps it: a JSON array, the record values in the snapshot's compact form. */
export function encodeUndoEntry(resource: ResourceName, entry: UndoEntry): string {
  const compact = [
    entry.action,
    entry.id,
    entry.key,
    fieldsMask(resource, entry.fields),
    entry.written,
  ];
  if (entry.before) compact.push(encodeCompact(resource, entry.before));
  return JSON.stringify(compact);
}

export function decodeUndoEntry(resource: ResourceName, row: number, text: string): UndoEntry {
  const [action, id, key, mask, written, before] = JSON.parse(text) as [
    UndoEntry['action'],
    string | number,
    string,
    number | string[],
    string,
    string | undefined,
  ];
  const fields = typeof mask === 'number' ? fieldsOfMask(resource, mask) : mask;
  const entry: UndoEntry = { row, action, id, key, fields, written };
  if (before !== undefined) entry.before = decodeCompact(resource, before);
  return entry;
}

/**
 * The fields as one number, a bit per field of the resource in spec order (a million entries
 * keep no million lists of names); a field the spec does not know keeps the list as it is.
 */
function fieldsMask(resource: ResourceName, fields: readonly string[]): number | readonly string[] {
  const bits = FIELD_BITS[resource];
  let mask = 0;
  for (const field of fields) {
    const bit = bits.get(field);
    if (bit === undefined || bit > 30) return fields;
    mask |= 1 << bit;
  }
  return mask;
}

/** Each field's bit: its place in the resource's spec order. */
const FIELD_BITS: { readonly [R in ResourceName]: ReadonlyMap<string, number> } = {
  users: fieldBits('users'),
  groups: fieldBits('groups'),
  acls: fieldBits('acls'),
};

function fieldBits(resource: ResourceName): Map<string, number> {
  return new Map(Object.keys(RESOURCES[resource].fields).map((field, bit) => [field, bit]));
}

function fieldsOfMask(resource: ResourceName, mask: number): string[] {
  return Object.keys(RESOURCES[resource].fields).filter((_, bit) => bit <= 30 && mask & (1 << bit));
}

/**
 * The strings in the order `sort()` gives them (UTF-16 code units), by insertion: a record's
 * few fields sort several times faster so than through the general sort.
 */
function sortedCopy(list: readonly string[]): string[] {
  const sorted = list.slice();
  for (let index = 1; index < sorted.length; index++) {
    const item = sorted[index]!;
    let place = index;
    while (place > 0 && sorted[place - 1]! > item) {
      sorted[place] = sorted[place - 1]!;
      place--;
    }
    sorted[place] = item;
  }
  return sorted;
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

function isScalar(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}
