/** A parsed JSON or NDJSON value as a raw record; anything but an object is an invalid record. */
import { showValue } from './coerce.js';
import type { RawRecord } from './types.js';

/** The raw record for one parsed value (`line` for NDJSON). */
export function rawFromJsonValue(value: unknown, row: number, line?: number): RawRecord {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return { row, line, input: value as Record<string, unknown>, text: false };
  }
  return {
    row,
    line,
    input: {},
    text: false,
    problem: {
      value,
      message: `the record is not a JSON object (${showValue(value)}); each record must be {...}`,
    },
  };
}
