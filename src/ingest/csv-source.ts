/**
 * CSV uploads: a header row, then one record per row.
 *
 * Records before one that is not valid UTF-8, or cannot be parsed, are still produced; then the
 * upload stops with PORTER_INPUT_UNREADABLE naming the row and the line it starts on.
 *
 * Decisions: blank rows and rows whose cells are all empty are skipped and not counted; a row
 * with more or fewer cells than the header is an invalid record, not a broken file; a row
 * larger than the record limit fails alone (PORTER_RECORD_TOO_LARGE), unread.
 */
import { ENCODING_ADVICE } from './text-encoding.js';
import { PorterError } from '../errors/porter-error.js';
import { showValue } from './coerce.js';
import type { ByteReader } from './byte-source.js';
import { CsvSyntaxError, physicalRecords, type PhysicalRecord } from './csv-records.js';
import { detectDelimiter, firstLineEnd } from './detect-delimiter.js';
import { tooLargeProblem } from './record-limit.js';
import type { RawRecord, RecordSource } from './types.js';

/** How much is read, at most, to find the end of the header line for delimiter detection. */
const HEADER_PEEK_BYTES = 1024 * 1024;

function isBlank(record: PhysicalRecord): boolean {
  if (record.tooLarge !== undefined) return false;
  for (const cell of record.cells) if (cell !== '' && cell.trim() !== '') return false;
  return true;
}

function unreadable(
  message: string,
  details: Record<string, unknown>,
  cause?: unknown,
): PorterError {
  return new PorterError('PORTER_INPUT_UNREADABLE', message, { details, cause });
}

const UTF8_ADVICE = ENCODING_ADVICE;

/** Reads the header and returns the records that follow, one per data row. */
export async function openCsvSource(
  reader: ByteReader,
  givenDelimiter: string | undefined,
  maxRecordBytes: number,
): Promise<RecordSource> {
  const head = await reader.peek((bytes) => firstLineEnd(bytes) !== -1, HEADER_PEEK_BYTES);
  const delimiter = givenDelimiter ?? detectDelimiter(head);
  const physical = physicalRecords(reader, delimiter, maxRecordBytes);

  let header: PhysicalRecord | undefined;
  let rest: PhysicalRecord[] = [];
  try {
    while (header === undefined) {
      const next = await physical.next();
      if (next.done === true) break;
      const at = next.value.findIndex((record) => record.invalidUtf8 === true || !isBlank(record));
      if (at !== -1) {
        header = next.value[at];
        rest = next.value.slice(at + 1);
      }
    }
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    throw unreadable(
      `Cannot read the CSV header (line ${error.line}): ${error.reason}.`,
      { line: error.line, csvCode: error.csvCode },
      error,
    );
  }
  if (header === undefined) {
    throw new PorterError(
      'PORTER_INPUT_EMPTY',
      'The CSV upload is empty: it has no header row and no records.',
    );
  }
  if (header.invalidUtf8 === true) {
    throw unreadable(`The CSV header (line ${header.line}) is not valid UTF-8; ${UTF8_ADVICE}.`, {
      line: header.line,
    });
  }
  if (header.tooLarge !== undefined) {
    throw unreadable(
      `The CSV header (line ${header.line}) is ${header.tooLarge} bytes, more than the ${maxRecordBytes} bytes a record may have (PORTER_MAX_RECORD_BYTES).`,
      { line: header.line, maxRecordBytes },
    );
  }
  const columns = header.cells;
  return {
    format: 'csv',
    columns,
    delimiter,
    records: dataRecords(rest, physical, columns, maxRecordBytes),
  };
}

async function* dataRecords(
  first: PhysicalRecord[],
  physical: AsyncGenerator<PhysicalRecord[]>,
  columns: readonly string[],
  maxRecordBytes: number,
): AsyncGenerator<RawRecord[]> {
  let row = 0;
  let pendingError: PorterError | undefined;
  const convert = (batch: readonly PhysicalRecord[]): RawRecord[] => {
    const records: RawRecord[] = [];
    for (const physicalRecord of batch) {
      if (physicalRecord.invalidUtf8 === true) {
        pendingError = utf8Error(physicalRecord, row + 1, columns);
        break;
      }
      if (isBlank(physicalRecord)) continue;
      row++;
      records.push(toRawRecord(physicalRecord, row, columns, maxRecordBytes));
    }
    return records;
  };
  try {
    for (let batch = first; ;) {
      const records = convert(batch);
      if (records.length > 0) yield records;
      if (pendingError !== undefined) throw pendingError;
      const next = await physical.next();
      if (next.done === true) return;
      batch = next.value;
    }
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    const failedRow = row + 1;
    throw unreadable(
      `Cannot read the CSV upload at row ${failedRow} (the record starting on line ${error.line}): ${error.reason}.`,
      { row: failedRow, line: error.line, csvCode: error.csvCode },
      error,
    );
  } finally {
    await physical.return(undefined);
  }
}

function utf8Error(record: PhysicalRecord, row: number, columns: readonly string[]): PorterError {
  const index = record.invalidCell ?? 0;
  const column = columns[index] ?? `#${index + 1}`;
  const where = `, column ${showValue(column)},`;
  return unreadable(
    `Row ${row} (line ${record.line})${where} is not valid UTF-8; ${UTF8_ADVICE}.`,
    {
      row,
      line: record.line,
      column,
    },
  );
}

function toRawRecord(
  record: PhysicalRecord,
  row: number,
  columns: readonly string[],
  maxRecordBytes: number,
): RawRecord {
  const { cells, line } = record;
  if (record.tooLarge !== undefined) {
    return {
      row,
      line,
      input: {},
      text: true,
      bytes: 0,
      problem: tooLargeProblem(record.tooLarge, maxRecordBytes),
    };
  }
  const input: Record<string, unknown> = {};
  for (let index = 0; index < cells.length; index++) {
    input[index < columns.length ? columns[index] : `#${index + 1}`] = cells[index];
  }
  const bytes = record.bytes;
  if (cells.length === columns.length) return { row, line, input, text: true, bytes, columns };
  const cellCount = `${cells.length} ${cells.length === 1 ? 'cell' : 'cells'}`;
  return {
    row,
    line,
    input,
    text: true,
    bytes,
    problem: { message: `the row has ${cellCount} but the header has ${columns.length} columns` },
  };
}
