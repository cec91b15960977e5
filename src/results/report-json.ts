/** The per-record report as one JSON array, streamed element by element with backpressure. */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RecordResult } from '../model/import.js';

export interface JsonReportOptions {
  /** End `out` when the report is written. Default true. */
  end?: boolean;
}

/** Text is handed on in pieces of about this size instead of one write per result. */
const PIECE_CHARS = 64 * 1024;

/** Writes `[` result, result, ... `]` to `out` (valid JSON when empty); resolves with the count. */
export async function writeJsonReport(
  results: AsyncIterable<RecordResult> | Iterable<RecordResult>,
  out: NodeJS.WritableStream,
  options: JsonReportOptions = {},
): Promise<number> {
  let written = 0;
  async function* pieces(): AsyncGenerator<string> {
    let piece = '[';
    for await (const result of results) {
      // a sync's record found only on the server has no row in the upload
      const shown = result.serverOnly ? { ...result, row: null } : result;
      piece += (written === 0 ? '\n' : ',\n') + JSON.stringify(shown);
      written++;
      if (piece.length >= PIECE_CHARS) {
        yield piece;
        piece = '';
      }
    }
    yield `${piece}${written === 0 ? ']' : '\n]'}\n`;
  }
  await pipeline(Readable.from(pieces()), out, { end: options.end ?? true });
  return written;
}
