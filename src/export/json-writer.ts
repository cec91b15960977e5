/** JSON (one array, one record per line) and NDJSON (one record per line). */
import type { RecordBatches } from './export-types.js';
import { batchText } from './text-chunks.js';

/** The text of a JSON array of the records, one record per line, in parts (one per batch). */
export async function* jsonArrayParts(batches: RecordBatches): AsyncGenerator<string> {
  let first = true;
  yield '[';
  for await (const batch of batches) {
    let part = '';
    for (const record of batch) {
      part += `${first ? '\n' : ',\n'}${JSON.stringify(record)}`;
      first = false;
    }
    yield part;
  }
  yield first ? ']' : '\n]';
}

async function* documentParts(batches: RecordBatches): AsyncGenerator<string> {
  yield* jsonArrayParts(batches);
  yield '\n';
}

async function* lineParts(batches: RecordBatches): AsyncGenerator<string> {
  for await (const batch of batches) {
    let part = '';
    for (const record of batch) part += `${JSON.stringify(record)}\n`;
    yield part;
  }
}

/** The records as one JSON array, in parts of about 64 KiB. */
export function jsonArraySource(batches: RecordBatches): AsyncGenerator<string> {
  return batchText(documentParts(batches));
}

/** The records as NDJSON, in parts of about 64 KiB. */
export function ndjsonSource(batches: RecordBatches): AsyncGenerator<string> {
  return batchText(lineParts(batches));
}
