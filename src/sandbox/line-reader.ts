/**
 * Reads a file line by line as a stream (memory bounded by the chunk size and the longest
 * line, never the file), telling for each line where it ends in bytes and whether a newline
 * closed it: the journal needs both to cut a torn last line off.
 */
import { createReadStream } from 'node:fs';

/** One line of a file, without its newline. */
export interface FileLine {
  text: string;
  /** 1-based. */
  number: number;
  /** Byte offset just past the line (and its newline, if it has one). */
  end: number;
  /** False only for a last line that no newline closes. */
  terminated: boolean;
}

const NEWLINE = 0x0a;
const READ_CHUNK_BYTES = 1024 * 1024;

/** The lines of `file`, which must exist, a chunk's worth at a time (one await per chunk, not per line). */
export async function* readFileLines(file: string): AsyncGenerator<FileLine[]> {
  const input = createReadStream(file, { highWaterMark: READ_CHUNK_BYTES });
  let pending: Buffer[] = [];
  let offset = 0;
  let number = 0;
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      const lines: FileLine[] = [];
      let start = 0;
      for (let at = chunk.indexOf(NEWLINE); at >= 0; at = chunk.indexOf(NEWLINE, start)) {
        let text: string;
        if (pending.length === 0) {
          // The common case, a line within one chunk: decoded in place, no copy.
          text = chunk.toString('utf8', start, at);
          offset += at - start + 1;
        } else {
          pending.push(chunk.subarray(start, at));
          const bytes = Buffer.concat(pending);
          pending = [];
          text = bytes.toString('utf8');
          offset += bytes.length + 1;
        }
        start = at + 1;
        lines.push({ text, number: ++number, end: offset, terminated: true });
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
      if (lines.length > 0) yield lines;
    }
  } finally {
    input.destroy();
  }
  const rest = Buffer.concat(pending);
  if (rest.length > 0) {
    const text = rest.toString('utf8');
    yield [{ text, number: number + 1, end: offset + rest.length, terminated: false }];
  }
}
