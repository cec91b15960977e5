/**
 * The CSV tokenizer driven by the upload's chunks: every record with the line it starts on, in
 * batches of what one chunk completed. Blank lines produce nothing.
 *
 * UTF-8 is checked on the raw chunks (fast, and a character split across chunks is carried
 * over); only the bytes before the first invalid one are tokenized, so the record in progress
 * then is the one holding it, and it ends the stream flagged `invalidUtf8`.
 */
import type { ByteReader } from './byte-source.js';
import { CsvSyntaxError, CsvTokenizer, type CsvRecord } from './csv-tokenizer.js';
import { Utf8StreamValidator } from './utf8.js';

export { CsvSyntaxError };

export interface PhysicalRecord extends CsvRecord {
  /** Set on the record holding the upload's first byte that is not UTF-8 (its cells are empty). */
  invalidUtf8?: true;
  /** With `invalidUtf8`: the index of the cell holding that byte. */
  invalidCell?: number;
}

/** Every non-blank record of the upload with the line it starts on, in batches of one chunk's. */
export async function* physicalRecords(
  reader: ByteReader,
  delimiter: string,
  maxRecordBytes: number,
): AsyncGenerator<PhysicalRecord[]> {
  const tokenizer = new CsvTokenizer(delimiter.charCodeAt(0), maxRecordBytes);
  const utf8 = new Utf8StreamValidator();
  let offset = 0;
  const invalidAt = (): PhysicalRecord => {
    const { line, cell } = tokenizer.position();
    return { cells: [], line, bytes: 0, invalidUtf8: true, invalidCell: cell };
  };
  for await (const chunk of reader.chunks()) {
    const batch: PhysicalRecord[] = [];
    const invalid = utf8.check(chunk);
    // the bad byte may have come with an earlier chunk, as the start of a split character
    const valid = invalid === -1 ? chunk : chunk.subarray(0, Math.max(0, invalid - offset));
    offset += chunk.length;
    // records completed before a syntax error are still handed on, then the error
    const failure = attempt(() => tokenizer.write(valid, batch));
    if (failure === undefined && invalid !== -1) batch.push(invalidAt());
    if (batch.length > 0) yield batch;
    if (failure !== undefined) throw failure;
    if (invalid !== -1) return;
  }
  const batch: PhysicalRecord[] = [];
  const incomplete = utf8.end() !== -1;
  const failure = incomplete ? undefined : attempt(() => tokenizer.end(batch));
  if (incomplete) batch.push(invalidAt());
  if (batch.length > 0) yield batch;
  if (failure !== undefined) throw failure;
}

function attempt(action: () => void): CsvSyntaxError | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    if (error instanceof CsvSyntaxError) return error;
    throw error;
  }
}
