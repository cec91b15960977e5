/**
 * A short fingerprint of a record as the server holds it: a plan remembers the one it was made
 * against, and a later write goes ahead only where the record read again has the same one.
 */
import { createHash } from 'node:crypto';

/** Fingerprint of "no such record". */
export const ABSENT = 'absent';

/** The same for the same JSON values, whatever the order of object keys. */
export function fingerprint(record: Record<string, unknown> | undefined): string {
  if (record === undefined) return ABSENT;
  return createHash('sha256').update(stableJson(record)).digest('base64url').slice(0, 16);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map(
        (key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`,
      );
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
