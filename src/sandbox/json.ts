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

function* chunks(records: Iterable<unknown>, pretty: boolean): Generator<string> {
  let buffer = '';
  let first = true;
  for (const record of records) {
    const text = pretty
      ? JSON.stringify(record, null, 2).replaceAll('\n', '\n  ')
      : JSON.stringify(record);
    if (first) {
      buffer += pretty ? `[\n  ${text}` : `[${text}`;
      first = false;
    } else {
      buffer += pretty ? `,\n  ${text}` : `,${text}`;
    }
    if (buffer.length >= CHUNK_CHARS) {
      yield buffer;
      buffer = '';
    }
  }
  yield first ? '[]' : buffer + (pretty ? '\n]' : ']');
}
