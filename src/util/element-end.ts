/**
 * Where one JSON value ends, found from its structure alone (brackets, strings and their escapes,
 * the end of a bare number or word), across as many chunks as it spans: the state is kept
 * between scan() calls, so each byte is looked at once. Whether the value is valid JSON is
 * JSON.parse's to say, afterwards.
 */
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  isWhitespace,
} from '../util/json-bytes.js';

export class ElementEnd {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private bare = false;

  /** Starts at the value's first byte; returns its end (exclusive), or -1 when past `buf`. */
  start(buf: Buffer, pos: number): number {
    const byte = buf[pos]!;
    this.depth = byte === OPEN_BRACE || byte === OPEN_BRACKET ? 1 : 0;
    this.inString = byte === QUOTE;
    this.escaped = false;
    this.bare = this.depth === 0 && !this.inString;
    return this.scan(buf, pos + 1);
  }

  /** Goes on from `from`; returns the value's end (exclusive), or -1 when past `buf`. */
  scan(buf: Buffer, from: number): number {
    let { depth, inString, escaped } = this;
    const bare = this.bare;
    const length = buf.length;
    let index = from;
    try {
      for (; index < length; index++) {
        const byte = buf[index]!;
        if (bare) {
          if (byte === COMMA || byte === CLOSE_BRACKET || byte === CLOSE_BRACE) return index;
          if (isWhitespace(byte)) return index;
          continue;
        }
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) {
            inString = false;
            if (depth === 0) return index + 1;
          }
          continue;
        }
        // a run of bytes that are none of the structure's (digits, commas, blanks) at once
        if (STRUCTURE[byte] === 0) {
          while (index + 1 < length && STRUCTURE[buf[index + 1]!] === 0) index++;
          continue;
        }
        if (byte === QUOTE) inString = true;
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
        else if (--depth === 0) return index + 1;
      }
      return -1;
    } finally {
      Object.assign(this, { depth, inString, escaped });
    }
  }
}

/** The bytes that open or close a level or a string, outside strings. */
const STRUCTURE = new Uint8Array(256).map((_, byte) =>
  byte === QUOTE ||
  byte === OPEN_BRACE ||
  byte === OPEN_BRACKET ||
  byte === CLOSE_BRACE ||
  byte === CLOSE_BRACKET
    ? 1
    : 0,
);
