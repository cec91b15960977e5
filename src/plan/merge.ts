/**
 * PUT overwrites a whole record, so an update reads the current record and lays the
 * upload's fields over it: a field the upload does not carry is never erased. A field the
 * interface never reads back as written (src/admin/read-back.ts) is not a change: an unchanged
 * file plans nothing, however often it is imported.
 */
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { writeShowsNoChange } from '../admin/read-back.js';
import type { FieldChange } from '../model/import.js';

export interface MergeResult {
  payload: Record<string, unknown>;
  /** Upload fields whose value differs from the current record, as the interface reads it. */
  changed: string[];
  /** The same fields with their value before (absent when the record had none) and after. */
  changes: FieldChange[];
}

/** Merges the upload's fields into the current record; service-supplied fields are left out. */
export function mergeRecord(
  resource: ResourceName,
  current: Record<string, unknown>,
  upload: Record<string, unknown>,
): MergeResult {
  const descriptor = RESOURCES[resource];
  const payload: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(current)) {
    if (value !== undefined) payload[field] = value;
  }
  const changed: string[] = [];
  const changes: FieldChange[] = [];
  for (const [field, value] of Object.entries(upload)) {
    if (value === undefined || field === descriptor.idField) continue;
    // a field the interface never shows as written is written along, never counted a change
    if (
      !sameValue(current[field], value) &&
      !writeShowsNoChange(resource, field, current[field], value)
    ) {
      changed.push(field);
      changes.push({ field, from: current[field], to: value });
    }
    payload[field] = value;
  }
  for (const field of descriptor.serviceFields) delete payload[field];
  payload[descriptor.idField] = current[descriptor.idField];
  return { payload, changed, changes };
}

/** Deep equality for JSON values; lists of ids compare as sets. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    if (a.every(isScalar) && b.every(isScalar)) {
      const left = new Set(a);
      return b.every((item) => left.has(item));
    }
    return a.every((item, index) => sameValue(item, b[index]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) if (!sameValue(a[key], b[key])) return false;
    return true;
  }
  // a string field never set reads back absent; sending "" leaves it as it was
  if ((a === undefined && b === '') || (a === '' && b === undefined)) return true;
  return false;
}

function isScalar(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
