/**
 * NDJSON uploads: one JSON record per line, blank lines skipped. Lines are cut at the byte
 * 0x0A, which never occurs inside a multibyte UTF-8 character, and each line is decoded whole.
 * A line that is not valid UTF-8 or not valid JSON makes the file unreadable, naming the line.
 */
import { PorterError } from '../errors/porter-error.js';
import type { ByteReader } from './byte-source.js';
import { isJsonWhitespace } from './detect-format.js';
import { rawFromJsonValue } from './json-record.js';
import { MAX_RECORD_BYTES } from './options.js';
import type { RawRecord, RecordSource } from './types.js';
import { decodeUtf8 } from './utf8.js';

const LF = 0x0a;
const CR = 0x0d;

function unreadable(message: string, row: number, line: number, cause?: unknown): PorterError {
  return new PorterError('PORTER_INPUT_UNREADABLE', message, { details: { row, line }, cause });
}

/** The records of an NDJSON upload. */
export function openNdjsonSource(reader: ByteReader): RecordSource {
  return { format: 'ndjson', records: ndjsonRecords(reader) };
}

/** The lines of the upload as bytes, without their line break, in batches of one chunk's lines. */
async function* byteLines(reader: ByteReader): AsyncGenerator<Uint8Array[]> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let line = 1;
  for await (const chunk of reader.chunks()) {
    const lines: Uint8Array[] = [];
    let start = 0;
    for (let end = chunk.indexOf(LF); end !== -1; end = chunk.indexOf(LF, start)) {
      const piece = chunk.subarray(start, end);
      lines.push(pending.length === 0 ? piece : Buffer.concat([...pending, piece]));
      pending = [];
      pendingBytes = 0;
      line++;
      start = end + 1;
    }
    if (lines.length > 0) yield lines;
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > MAX_RECORD_BYTES) {
        throw new PorterError(
          'PORTER_INPUT_UNREADABLE',
          `NDJSON line ${line} is longer than ${MAX_RECORD_BYTES / 1024 / 1024} MiB; is this really one record per line?`,
          { details: { line } },
        );
      }
    }
  }
  if (pending.length > 0) yield [Buffer.concat(pending)];
}

function isBlankLine(bytes: Uint8Array): boolean {
  return bytes.every(isJsonWhitespace);
}

async function* ndjsonRecords(reader: ByteReader): AsyncGenerator<RawRecord[]> {
  let line = 0;
  let row = 0;
  for await (const lines of byteLines(reader)) {
    const records: RawRecord[] = [];
    let failure: PorterError | undefined;
    for (let bytes of lines) {
      line++;
      if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, -1);
      if (isBlankLine(bytes)) continue;
      row++;
      const parsed = parseLine(bytes, row, line);
      if (parsed instanceof PorterError) {
        failure = parsed;
        break;
      }
      records.push(rawFromJsonValue(parsed.value, row, line));
    }
    // the records before a broken line are still produced, then the upload stops
    if (records.length > 0) yield records;
    if (failure !== undefined) throw failure;
  }
}

function parseLine(bytes: Uint8Array, row: number, line: number): { value: unknown } | PorterError {
  const text = decodeUtf8(bytes);
  if (text === undefined) {
    return unreadable(
      `NDJSON line ${line} (record ${row}) is not valid UTF-8; save the file as UTF-8 and upload it again.`,
      row,
      line,
    );
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return unreadable(
      `NDJSON line ${line} (record ${row}) is not valid JSON: ${reason}.`,
      row,
      line,
      error,
    );
  }
}
