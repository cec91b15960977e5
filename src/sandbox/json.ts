/**
 * Writing answers: every answer is a JSON array, indented by 2 spaces when `pretty`.
 * Lists of unknown size are streamed in chunks, so GET on a million users never builds
 * one giant string (V8 strings stop at about 512 MB).
 */
import { Readable } from 'node:stream';

const CHUNK_CHARS = 64 * 1024;

/** A JSON array of the records, as one string. */
export function jsonArray(records: readonly unknown[], pretty: boolean): string {
  return pretty ? JSON.stringify(records, null, 2) : JSON.stringify(records);
}

/** A JSON array of the records as a stream, byte for byte what jsonArray would give. */
export function jsonArrayStream(records: Iterable<unknown>, pretty: boolean): Readable {
  return Readable.from(chunks(records, pretty), { objectMode: false });
}

/** Records stringified together: one JSON.stringify per batch costs less than one per record. */
const RECORDS_PER_BATCH = 256;

function* chunks(records: Iterable<unknown>, pretty: boolean): Generator<string> {
  let buffer = '';
  let first = true;
  let batch: unknown[] = [];
  for (const record of records) {
    batch.push(record);
    if (batch.length < RECORDS_PER_BATCH) continue;
    buffer += arrayPart(batch, pretty, first);
    first = false;
    batch = [];
    if (buffer.length >= CHUNK_CHARS) {
      yield buffer;
      buffer = '';
    }
  }
  if (batch.length > 0) {
    buffer += arrayPart(batch, pretty, first);
    first = false;
  }
  yield first ? '[]' : buffer + (pretty ? '\n]' : ']');
}

/** The text of the records inside the array: after its `[` when first, else after a comma. */
function arrayPart(batch: readonly unknown[], pretty: boolean, first: boolean): string {
  // the batch as an array is `[` elements `]`, or pretty `[\n  ` elements `\n]`, indented as
  // they are in the whole array
  const inner = pretty
    ? JSON.stringify(batch, null, 2).slice(4, -2)
    : JSON.stringify(batch).slice(1, -1);
  if (pretty) return first ? `[\n  ${inner}` : `,\n  ${inner}`;
  return first ? `[${inner}` : `,${inner}`;
}
