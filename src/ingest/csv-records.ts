/**
 * csv-parse driven by the upload's chunks: every physical record (blank lines included) with
 * the line it starts on, in batches of what one chunk completed.
 *
 * UTF-8 is checked on the raw chunks (fast, and a character split across chunks is carried
 * over); the byte offset where csv-parse ends each record names the record holding the first
 * invalid byte, which ends the stream flagged `invalidUtf8`.
 */
import { parse, type CsvError } from 'csv-parse';
import { PorterError } from '../errors/porter-error.js';
import type { ByteReader } from './byte-source.js';
import { MAX_RECORD_BYTES } from './options.js';
import { Utf8StreamValidator } from './utf8.js';

export interface PhysicalRecord {
  cells: string[];
  /** Line the record starts on. */
  line: number;
  /** Set on the record holding the upload's first byte that is not UTF-8. */
  invalidUtf8?: true;
}

/** A syntax error, located by the line its record starts on. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
    readonly csvCode?: string,
  ) {
    super(reason);
  }
}

const REASONS: Readonly<Record<string, string>> = {
  CSV_QUOTE_NOT_CLOSED: 'a quoted value is never closed (a closing " is missing)',
  CSV_INVALID_CLOSING_QUOTE:
    'a quoted value is followed by other characters before the next delimiter (write a " inside a quoted value as "")',
  INVALID_OPENING_QUOTE:
    'a " appears inside a value that is not quoted (quote the value and write the inner " as "")',
  CSV_MAX_RECORD_SIZE: `a record is longer than ${MAX_RECORD_BYTES / 1024 / 1024} MiB (often a quote that is never closed)`,
};

/** Line breaks inside a cell (CRLF counts once), so the next record's line is known. */
function lineBreaks(cell: string): number {
  if (cell.indexOf('\n') === -1 && cell.indexOf('\r') === -1) return 0;
  let breaks = 0;
  for (let index = 0; index < cell.length; index++) {
    const char = cell.charCodeAt(index);
    if (char === 0x0a) breaks++;
    else if (char === 0x0d && cell.charCodeAt(index + 1) !== 0x0a) breaks++;
  }
  return breaks;
}

/**
 * Every physical record of the upload with the line it starts on, blank lines included, in
 * batches of what one chunk completed.
 */
export async function* physicalRecords(
  reader: ByteReader,
  delimiter: string,
): AsyncGenerator<PhysicalRecord[]> {
  const parsed: string[][] = [];
  const ends: number[] = [];
  const parser = parse({
    delimiter,
    bom: false,
    relax_column_count: true,
    max_record_size: MAX_RECORD_BYTES,
  });
  // In flowing mode with nothing buffered, Node emits 'data' inside push(), while csv-parse
  // runs, so `info.bytes` is still the end offset of that record. It is checked, not trusted:
  // every record csv-parse counted must have arrived by the time write() returns.
  parser.on('data', (record: string[]) => {
    parsed.push(record);
    ends.push(parser.info.bytes);
  });
  parser.on('error', () => {}); // surfaced through the write callbacks below
  let received = 0;
  const checkReceived = (): void => {
    received += parsed.length;
    if (received !== parser.info.records) {
      throw new PorterError(
        'PORTER_INTERNAL',
        'csv-parse emitted records later than expected; ingest cannot locate them.',
      );
    }
  };
  const feed = (chunk: Uint8Array | undefined): Promise<CsvError | undefined> =>
    new Promise((resolve) => {
      const done = (error?: Error | null): void =>
        resolve((error ?? undefined) as CsvError | undefined);
      if (chunk === undefined) parser.end(done);
      else parser.write(chunk, done);
    });

  const utf8 = new Utf8StreamValidator();
  let invalidAt = -1;
  let nextLine = 1;
  let bytesSinceRecord = 0;
  /** The records parsed so far, up to and including the one holding the invalid byte. */
  function take(): PhysicalRecord[] {
    const batch: PhysicalRecord[] = [];
    for (let index = 0; index < parsed.length; index++) {
      const cells = parsed[index];
      const record: PhysicalRecord = { cells, line: nextLine };
      nextLine += 1;
      for (const cell of cells) nextLine += lineBreaks(cell);
      batch.push(record);
      if (invalidAt !== -1 && ends[index] > invalidAt) {
        record.invalidUtf8 = true;
        break;
      }
    }
    parsed.length = 0;
    ends.length = 0;
    return batch;
  }
  try {
    for await (const chunk of reader.chunks()) {
      if (invalidAt === -1) invalidAt = utf8.check(chunk);
      const written = feed(chunk);
      checkReceived();
      const error = await written;
      bytesSinceRecord = parsed.length > 0 ? 0 : bytesSinceRecord + chunk.length;
      const batch = take();
      if (batch.length > 0) yield batch;
      if (batch.at(-1)?.invalidUtf8 === true) return;
      if (error !== undefined) throw syntaxError(error, nextLine);
      if (bytesSinceRecord > MAX_RECORD_BYTES) {
        throw new CsvSyntaxError(nextLine, REASONS.CSV_MAX_RECORD_SIZE, 'CSV_MAX_RECORD_SIZE');
      }
    }
    if (invalidAt === -1) invalidAt = utf8.end();
    const error = await feed(undefined);
    checkReceived();
    const batch = take();
    if (batch.length > 0) yield batch;
    if (batch.at(-1)?.invalidUtf8 === true) return;
    if (error !== undefined) throw syntaxError(error, nextLine);
  } finally {
    parser.destroy();
  }
}

function syntaxError(error: CsvError, line: number): CsvSyntaxError {
  return new CsvSyntaxError(line, REASONS[error.code] ?? error.message, error.code);
}
