/** Finds the CSV delimiter from the header line: the candidate found most often outside quotes. */
import { CSV_DELIMITERS } from './options.js';

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;
const CANDIDATE_BYTES = CSV_DELIMITERS.map((delimiter) => delimiter.charCodeAt(0));

/** Index of the first byte that is not a line break: blank lines before the header are skipped. */
function firstLineStart(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length && (bytes[index] === LF || bytes[index] === CR)) index++;
  return index;
}

/**
 * Index of the line break ending the first non-blank line (quotes respected), or -1 if not
 * seen yet.
 */
export function firstLineEnd(bytes: Uint8Array): number {
  let quoted = false;
  for (let index = firstLineStart(bytes); index < bytes.length; index++) {
    const byte = bytes[index];
    if (byte === QUOTE) quoted = !quoted;
    else if (!quoted && (byte === LF || byte === CR)) return index;
  }
  return -1;
}

/**
 * The delimiter of a CSV whose text starts with `head`. Ties go to the earlier candidate
 * (',' before ';' before tab before '|'); a header without any candidate is one column, read
 * with ','.
 */
export function detectDelimiter(head: Uint8Array): string {
  const end = firstLineEnd(head);
  const line = head.subarray(firstLineStart(head), end === -1 ? head.length : end);
  const counts = new Array<number>(CANDIDATE_BYTES.length).fill(0);
  let quoted = false;
  for (const byte of line) {
    if (byte === QUOTE) {
      quoted = !quoted;
      continue;
    }
    if (quoted) continue;
    const candidate = CANDIDATE_BYTES.indexOf(byte);
    if (candidate !== -1) counts[candidate]++;
  }
  let best = 0;
  for (let candidate = 1; candidate < counts.length; candidate++) {
    if (counts[candidate] > counts[best]) best = candidate;
  }
  return CSV_DELIMITERS[best];
}
