/**
 * JSON uploads: one array of records, parsed as it streams (`$.*`, without keeping parsed
 * elements), so the array is never held whole. JSON has no lines worth reporting; errors name
 * the record. An element that is not an object is an invalid record, not a broken file.
 */
import { JSONParser } from '@streamparser/json';
import { PorterError } from '../errors/porter-error.js';
import type { ByteReader } from './byte-source.js';
import { firstContentIndex } from './detect-format.js';
import { rawFromJsonValue } from './json-record.js';
import type { RawRecord, RecordSource } from './types.js';
import { InvalidUtf8Error, Utf8ChunkDecoder } from './utf8.js';

function unreadable(message: string, row: number, cause?: unknown): PorterError {
  return new PorterError('PORTER_INPUT_UNREADABLE', message, { details: { row }, cause });
}

/** Checks that the upload is a JSON array and returns its elements as records. */
export async function openJsonSource(reader: ByteReader): Promise<RecordSource> {
  const head = await reader.peek((bytes) => firstContentIndex(bytes) !== -1);
  const first = head[firstContentIndex(head)];
  if (first !== 0x5b) {
    const hint =
      first === 0x7b
        ? '; it starts with "{" — for one record per line, upload it as NDJSON (.ndjson)'
        : '';
    throw new PorterError(
      'PORTER_INPUT_UNREADABLE',
      `A JSON upload must be one array of records ([{...}, {...}])${hint}.`,
      { details: { row: 1 } },
    );
  }
  return { format: 'json', records: jsonRecords(reader) };
}

async function* jsonRecords(reader: ByteReader): AsyncGenerator<RawRecord[]> {
  const batch: unknown[] = [];
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false });
  parser.onValue = ({ value }) => {
    batch.push(value);
  };
  const decoder = new Utf8ChunkDecoder();
  let row = 0;
  function drain(): RawRecord[] {
    const records = batch.map((value) => rawFromJsonValue(value, ++row));
    batch.length = 0;
    return records;
  }
  /** Feeds text; records it completed are drained by the caller even when it fails. */
  function write(text: string): unknown {
    if (parser.isEnded) {
      if (text.trim() === '') return undefined;
      return new Error('there is more after the closing "]" of the array');
    }
    try {
      parser.write(text);
      return undefined;
    } catch (error) {
      return error;
    }
  }

  for await (const chunk of reader.chunks()) {
    let text: string;
    let utf8Error: InvalidUtf8Error | undefined;
    try {
      text = decoder.decode(chunk);
    } catch (error) {
      if (!(error instanceof InvalidUtf8Error)) throw error;
      utf8Error = error;
      text = error.text;
    }
    const parseError = write(text);
    const records = drain();
    if (records.length > 0) yield records;
    if (parseError !== undefined) {
      const reason = parseError instanceof Error ? parseError.message : String(parseError);
      throw unreadable(
        `Cannot read the JSON upload after record ${row}: ${reason}.`,
        row + 1,
        parseError,
      );
    }
    if (utf8Error !== undefined) {
      throw unreadable(
        `The JSON upload is not valid UTF-8 in record ${row + 1}; save the file as UTF-8 and upload it again.`,
        row + 1,
      );
    }
  }
  try {
    decoder.end();
  } catch {
    throw unreadable(
      'The JSON upload ends in the middle of a UTF-8 character; the file is truncated.',
      row + 1,
    );
  }
  if (!parser.isEnded) {
    throw unreadable(
      `The JSON upload ends in the middle of the array, after record ${row}; the file is truncated or a "]" is missing.`,
      row + 1,
    );
  }
}
