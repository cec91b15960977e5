/**
 * JSON uploads: one array of records, split as it streams (json-splitter.ts) and each element
 * parsed strictly (json-value.ts), so the array is never held whole and no record is larger in
 * memory than the record limit. JSON has no lines worth reporting; errors name the record. An
 * element that is not an object, or too large, is an invalid record, not a broken file.
 */
import { ENCODING_ADVICE } from './text-encoding.js';
import { PorterError } from '../errors/porter-error.js';
import type { ByteReader } from './byte-source.js';
import { firstContentIndex } from './detect-format.js';
import { rawFromJson } from './json-record.js';
import { JsonArraySplitter, JsonArraySyntaxError, type JsonElement } from './json-splitter.js';
import { JsonTextError, MAX_JSON_DEPTH, parseJsonText } from './json-value.js';
import { tooLargeProblem } from './record-limit.js';
import type { RawRecord, RecordSource } from './types.js';
import { Utf8StreamValidator } from './utf8.js';

/** How far the start is searched for the opening "[" before the splitter takes over. */
const OPENING_PEEK_BYTES = 64 * 1024;

function unreadable(
  message: string,
  row: number,
  cause?: unknown,
  extra: Record<string, unknown> = {},
): PorterError {
  return new PorterError('PORTER_INPUT_UNREADABLE', message, {
    details: { row, ...extra },
    cause,
  });
}

/** Checks that the upload is a JSON array and returns its elements as records. */
export async function openJsonSource(
  reader: ByteReader,
  maxRecordBytes: number,
): Promise<RecordSource> {
  const head = await reader.peek((bytes) => firstContentIndex(bytes) !== -1, OPENING_PEEK_BYTES);
  const index = firstContentIndex(head);
  const first = index === -1 ? undefined : head[index];
  if (first !== undefined && first !== 0x5b) {
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
  return { format: 'json', records: jsonRecords(reader, maxRecordBytes) };
}

async function* jsonRecords(
  reader: ByteReader,
  maxRecordBytes: number,
): AsyncGenerator<RawRecord[]> {
  const splitter = new JsonArraySplitter(maxRecordBytes, MAX_JSON_DEPTH);
  const utf8 = new Utf8StreamValidator();
  let offset = 0;
  let row = 0;
  /** The records of the elements; a failure to parse one ends the batch and is returned. */
  function convert(
    elements: readonly JsonElement[],
    records: RawRecord[],
  ): PorterError | undefined {
    for (const element of elements) {
      row++;
      if (element.tooLarge !== undefined) {
        const problem = tooLargeProblem(element.tooLarge, maxRecordBytes);
        records.push({ row, input: {}, text: false, problem });
        continue;
      }
      try {
        const text = Buffer.from(
          element.bytes.buffer,
          element.bytes.byteOffset,
          element.bytes.length,
        ).toString('utf8');
        records.push(rawFromJson(parseJsonText(text), row));
      } catch (error) {
        if (!(error instanceof JsonTextError)) throw error;
        return unreadable(
          `Cannot read the JSON upload at record ${row}: ${error.message}.`,
          row,
          error,
          error.depthLimit === undefined ? {} : { depthLimit: error.depthLimit },
        );
      }
    }
    return undefined;
  }

  for await (const chunk of reader.chunks()) {
    const invalid = utf8.check(chunk);
    const valid = invalid === -1 ? chunk : chunk.subarray(0, Math.max(0, invalid - offset));
    offset += chunk.length;
    const elements: JsonElement[] = [];
    let failure: PorterError | undefined;
    try {
      splitter.write(valid, elements);
    } catch (error) {
      if (!(error instanceof JsonArraySyntaxError)) throw error;
      failure = arrayError(error, row + elements.length + 1);
    }
    const records: RawRecord[] = [];
    failure = convert(elements, records) ?? failure;
    // the records before a broken one are still produced, then the upload stops
    if (records.length > 0) yield records;
    if (failure !== undefined) throw failure;
    if (invalid !== -1) {
      throw unreadable(
        `The JSON upload is not valid UTF-8 in record ${row + 1}; ${ENCODING_ADVICE}.`,
        row + 1,
      );
    }
  }
  if (utf8.end() !== -1) {
    throw unreadable(
      'The JSON upload ends in the middle of a UTF-8 character; the file is truncated.',
      row + 1,
    );
  }
  try {
    splitter.end();
  } catch (error) {
    if (!(error instanceof JsonArraySyntaxError)) throw error;
    throw arrayError(error, row + 1);
  }
}

function arrayError(error: JsonArraySyntaxError, row: number): PorterError {
  return unreadable(
    `Cannot read the JSON upload at record ${row}: ${error.message}.`,
    row,
    error,
    error.depthLimit === undefined ? {} : { depthLimit: error.depthLimit },
  );
}
