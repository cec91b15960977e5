/**
 * A short fingerprint of a record as the server holds it: a plan remembers the one it was made
 * against, and a later write goes ahead only where the record read again has the same one.
 */
import { hash } from 'node:crypto';

/** Fingerprint of "no such record". */
export const ABSENT = 'absent';

/** The same for the same JSON values, whatever the order of object keys. */
export function fingerprint(record: Record<string, unknown> | undefined): string {
  if (record === undefined) return ABSENT;
  return fingerprintOfJson(stableJson(record));
}

/** The fingerprint of a record already written as stableJson writes it. */
export function fingerprintOfJson(json: string): string {
  // one-shot: a fingerprint is taken per record written, and a Hash object costs twice as much
  return hash('sha256', json, 'base64url').slice(0, 16);
}

/** JSON with every object's keys in sorted order, and without undefined members. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) text += ',';
      text += stableJson(value[index]);
    }
    return `${text}]`;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    // a loop, not map/filter/join: this runs for every record a plan or an undo entry covers
    const keys = Object.keys(record).sort();
    let text = '{';
    for (const key of keys) {
      const item = record[key];
      if (item === undefined) continue;
      if (text.length > 1) text += ',';
      text += `${JSON.stringify(key)}:${stableJson(item)}`;
    }
    return `${text}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
