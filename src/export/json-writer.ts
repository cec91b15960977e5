/** JSON (one array, written record by record) and NDJSON (one record per line). */
import { Readable } from 'node:stream';
import { batchText } from './text-chunks.js';

/** The text of a JSON array of the records, one record per line, in parts. */
export async function* jsonArrayParts(records: AsyncIterable<unknown>): AsyncGenerator<string> {
  let first = true;
  yield '[';
  for await (const record of records) {
    yield `${first ? '\n' : ',\n'}${JSON.stringify(record)}`;
    first = false;
  }
  yield first ? ']' : '\n]';
}

async function* documentParts(records: AsyncIterable<unknown>): AsyncGenerator<string> {
  yield* jsonArrayParts(records);
  yield '\n';
}

async function* lineParts(records: AsyncIterable<unknown>): AsyncGenerator<string> {
  for await (const record of records) yield `${JSON.stringify(record)}\n`;
}

/** The records as one JSON array, streamed. */
export function jsonArraySource(records: AsyncIterable<unknown>): Readable {
  return Readable.from(batchText(documentParts(records)), { objectMode: false });
}

/** The records as NDJSON, streamed. */
export function ndjsonSource(records: AsyncIterable<unknown>): Readable {
  return Readable.from(batchText(lineParts(records)), { objectMode: false });
}
