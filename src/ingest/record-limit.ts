/**
 * The record size limit: a record larger than it is not kept in memory; the parser reads on to
 * the record's end and the record fails alone with PORTER_RECORD_TOO_LARGE.
 */
import type { RawRecord } from './types.js';

/** Default of PORTER_MAX_RECORD_BYTES: 1 MiB per record (a CSV row, a JSON element, a line). */
export const DEFAULT_MAX_RECORD_BYTES = 1024 * 1024;

/** The problem of a record of `bytes` bytes that was over the limit. */
export function tooLargeProblem(bytes: number, maxRecordBytes: number): RawRecord['problem'] {
  return {
    code: 'PORTER_RECORD_TOO_LARGE',
    message:
      `the record is ${bytes} bytes, more than the ${maxRecordBytes} a record may have ` +
      '(PORTER_MAX_RECORD_BYTES); it was not read',
  };
}
