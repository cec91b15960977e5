/**
 * NDJSON uploads: one JSON record per line, blank lines skipped. Lines are cut at the byte
 * 0x0A, which never occurs inside a multibyte UTF-8 character, and each line is decoded whole.
 * A line longer than the record limit is not kept: it fails alone (PORTER_RECORD_TOO_LARGE).
 * A line that is not valid UTF-8 or not valid JSON makes the file unreadable, naming the line.
 */
import { ENCODING_ADVICE } from './text-encoding.js';
import { PorterError } from '../errors/porter-error.js';
import type { ByteReader } from './byte-source.js';
import { isJsonWhitespace } from './detect-format.js';
import { rawFromJson } from './json-record.js';
import { JsonTextError, parseJsonText } from './json-value.js';
import { tooLargeProblem } from './record-limit.js';
import type { RawRecord, RecordSource } from './types.js';
import { decodeUtf8 } from './utf8.js';

const LF = 0x0a;
const CR = 0x0d;

function unreadable(
  message: string,
  row: number,
  line: number,
  cause?: unknown,
  extra: Record<string, unknown> = {},
): PorterError {
  return new PorterError('PORTER_INPUT_UNREADABLE', message, {
    details: { row, line, ...extra },
    cause,
  });
}

/** The records of an NDJSON upload. */
export function openNdjsonSource(reader: ByteReader, maxRecordBytes: number): RecordSource {
  return { format: 'ndjson', records: ndjsonRecords(reader, maxRecordBytes) };
}

/** A line's bytes, or the size of a line over the limit (its bytes were not kept). */
type Line = Uint8Array | number;

/** The lines of the upload without their line break, in batches of one chunk's lines. */
async function* byteLines(reader: ByteReader, maxRecordBytes: number): AsyncGenerator<Line[]> {
  let pending: Uint8Array[] = [];
  /** Bytes of the line in progress so far, kept or not. */
  let pendingBytes = 0;
  let tooLarge = false;
  for await (const chunk of reader.chunks()) {
    const lines: Line[] = [];
    let start = 0;
    for (let end = chunk.indexOf(LF); end !== -1; end = chunk.indexOf(LF, start)) {
      const piece = chunk.subarray(start, end);
      const size = pendingBytes + piece.length;
      if (tooLarge || size > maxRecordBytes) lines.push(size);
      else lines.push(pending.length === 0 ? piece : Buffer.concat([...pending, piece]));
      pending = [];
      pendingBytes = 0;
      tooLarge = false;
      start = end + 1;
    }
    if (lines.length > 0) yield lines;
    if (start < chunk.length) {
      pendingBytes += chunk.length - start;
      if (tooLarge || pendingBytes > maxRecordBytes) {
        // stop keeping the line; it is read to its end and reported by its size
        tooLarge = true;
        pending = [];
      } else {
        pending.push(chunk.subarray(start));
      }
    }
  }
  if (tooLarge) yield [pendingBytes];
  else if (pending.length > 0) yield [Buffer.concat(pending)];
}

function isBlankLine(bytes: Uint8Array): boolean {
  return bytes.every(isJsonWhitespace);
}

async function* ndjsonRecords(
  reader: ByteReader,
  maxRecordBytes: number,
): AsyncGenerator<RawRecord[]> {
  let line = 0;
  let row = 0;
  for await (const lines of byteLines(reader, maxRecordBytes)) {
    const records: RawRecord[] = [];
    let failure: PorterError | undefined;
    for (let bytes of lines) {
      line++;
      if (typeof bytes === 'number') {
        row++;
        const problem = tooLargeProblem(bytes, maxRecordBytes);
        records.push({ row, line, input: {}, text: false, problem });
        continue;
      }
      if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, -1);
      if (isBlankLine(bytes)) continue;
      row++;
      const parsed = parseLine(bytes, row, line);
      if (parsed instanceof PorterError) {
        failure = parsed;
        break;
      }
      records.push(parsed);
    }
    // the records before a broken line are still produced, then the upload stops
    if (records.length > 0) yield records;
    if (failure !== undefined) throw failure;
  }
}

function parseLine(bytes: Uint8Array, row: number, line: number): RawRecord | PorterError {
  const text = decodeUtf8(bytes);
  if (text === undefined) {
    return unreadable(
      `NDJSON line ${line} (record ${row}) is not valid UTF-8; ${ENCODING_ADVICE}.`,
      row,
      line,
    );
  }
  try {
    return rawFromJson(parseJsonText(text), row, line);
  } catch (error) {
    if (!(error instanceof JsonTextError)) throw error;
    return unreadable(
      `NDJSON line ${line} (record ${row}) is not valid JSON: ${error.message}.`,
      row,
      line,
      error,
      error.depthLimit === undefined ? {} : { depthLimit: error.depthLimit },
    );
  }
}
