/**
 * Splits a JSON array arriving in byte chunks into the bytes of its elements, without parsing
 * them (see json-value.ts for that). Only the array's structure is scanned: nesting, strings,
 * commas. Two limits keep a hostile upload from taking the memory or the stack:
 *
 * - an element larger than `maxRecordBytes` stops being kept; the splitter reads on to its end
 *   and hands on its size only (`tooLarge`);
 * - nesting deeper than `maxDepth` inside an element is a syntax error naming the limit.
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

/** The array is malformed (or nests too deep); thrown once, ending the upload. */
export class JsonArraySyntaxError extends Error {
  constructor(
    message: string,
    /** The nesting limit, when that is what was passed. */
    readonly depthLimit?: number,
  ) {
    super(message);
    this.name = 'JsonArraySyntaxError';
  }
}

export type JsonElement =
  | { bytes: Uint8Array; tooLarge?: undefined }
  /** Larger than the limit: only its size is known. */
  | { tooLarge: number };

type Expect = 'open' | 'element-or-close' | 'element' | 'comma-or-close' | 'nothing';

/** Feed it chunks with `write`, then call `end`. */
export class JsonArraySplitter {
  private expect: Expect = 'open';
  /** Nesting inside the current element (0: between elements). */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The current element is a bare value (number, true, false, null) ended by , ] or blank. */
  private bare = false;
  /** Bytes of the current element from earlier chunks. */
  private carried: Uint8Array[] = [];
  private carriedBytes = 0;
  private tooLarge = false;
  /** Stream offset of the current chunk's first byte, and of the current element's. */
  private offset = 0;
  private elementStart = 0;

  constructor(
    private readonly maxRecordBytes: number,
    private readonly maxDepth: number,
  ) {}

  /** Bytes of the element in progress held in memory (never more than the limit). */
  get bufferedBytes(): number {
    return this.carriedBytes;
  }

  /** Feeds one chunk; the elements it completed are appended to `out`. */
  write(chunk: Uint8Array, out: JsonElement[]): void {
    let start = this.inElement() ? 0 : -1;
    let nextBackslash = -2;
    let nextQuote = -2;
    for (let index = 0; index < chunk.length; index++) {
      const byte = chunk[index];
      if (this.inElement()) {
        if (this.bare) {
          if (byte === COMMA || byte === CLOSE_BRACKET || isWhitespace(byte)) {
            this.finish(chunk, start, index, out);
            start = -1;
            this.afterBareElement(byte);
          }
          continue;
        }
        if (this.inString) {
          if (this.escaped) {
            this.escaped = false;
            continue;
          }
          // most bytes are inside strings: jump to the next quote or backslash
          if (nextBackslash !== -1 && nextBackslash < index) {
            nextBackslash = chunk.indexOf(BACKSLASH, index);
          }
          // searched again only once passed: a string of escapes is scanned once
          if (nextQuote !== -1 && nextQuote < index) nextQuote = chunk.indexOf(QUOTE, index);
          const quote = nextQuote;
          if (nextBackslash !== -1 && (quote === -1 || nextBackslash < quote)) {
            index = nextBackslash; // the byte after it is escaped
            this.escaped = true;
            continue;
          }
          if (quote === -1) {
            index = chunk.length;
            continue;
          }
          index = quote;
          this.inString = false;
          if (this.depth === 0) {
            this.finish(chunk, start, index + 1, out);
            start = -1;
          }
          continue;
        }
        if (byte === QUOTE) this.inString = true;
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.enter();
        else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
          this.depth--;
          if (this.depth === 0) {
            this.finish(chunk, start, index + 1, out);
            start = -1;
          }
        }
        continue;
      }
      if (isWhitespace(byte)) continue;
      switch (this.expect) {
        case 'open':
          if (byte !== OPEN_BRACKET) this.fail(byte, index);
          this.expect = 'element-or-close';
          break;
        case 'element-or-close':
        case 'element':
          if (byte === CLOSE_BRACKET && this.expect === 'element-or-close') {
            this.expect = 'nothing';
            break;
          }
          if (byte === COMMA || byte === CLOSE_BRACKET) this.fail(byte, index);
          start = index;
          this.elementStart = this.offset + index;
          this.beginElement(byte);
          break;
        case 'comma-or-close':
          if (byte === COMMA) this.expect = 'element';
          else if (byte === CLOSE_BRACKET) this.expect = 'nothing';
          else this.fail(byte, index);
          break;
        case 'nothing':
          this.fail(byte, index);
      }
    }
    if (start !== -1) this.carry(chunk.subarray(start));
    this.offset += chunk.length;
  }

  /** Ends the input; throws when the array was not closed. */
  end(): void {
    if (this.expect === 'open') throw new JsonArraySyntaxError('the upload holds no array');
    if (this.expect !== 'nothing' || this.inElement()) {
      throw new JsonArraySyntaxError(
        'the upload ends in the middle of the array; the file is truncated or a "]" is missing',
      );
    }
  }

  private inElement(): boolean {
    return this.depth > 0 || this.inString || this.bare;
  }

  private enter(): void {
    this.depth++;
    if (this.depth > this.maxDepth) {
      throw new JsonArraySyntaxError(
        `a record nests objects and arrays deeper than ${this.maxDepth} levels, the limit`,
        this.maxDepth,
      );
    }
  }

  private beginElement(byte: number): void {
    this.tooLarge = false;
    if (byte === QUOTE) this.inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.enter();
    else this.bare = true;
  }

  private afterBareElement(byte: number): void {
    if (byte === COMMA) this.expect = 'element';
    else if (byte === CLOSE_BRACKET) this.expect = 'nothing';
  }

  /** Keeps the element's bytes from this chunk, unless the element is over the limit. */
  private carry(piece: Uint8Array): void {
    if (this.tooLarge) return;
    this.carriedBytes += piece.length;
    if (this.carriedBytes > this.maxRecordBytes) {
      this.tooLarge = true;
      this.carried = [];
      this.carriedBytes = 0;
      return;
    }
    this.carried.push(piece);
  }

  private finish(chunk: Uint8Array, start: number, end: number, out: JsonElement[]): void {
    const size = this.offset + end - this.elementStart;
    this.bare = false;
    this.expect = 'comma-or-close';
    if (this.tooLarge || size > this.maxRecordBytes) {
      this.carried = [];
      this.carriedBytes = 0;
      this.tooLarge = false;
      out.push({ tooLarge: size });
      return;
    }
    const piece = chunk.subarray(Math.max(0, start), end);
    const bytes = this.carried.length > 0 ? Buffer.concat([...this.carried, piece]) : piece;
    this.carried = [];
    this.carriedBytes = 0;
    out.push({ bytes });
  }

  private fail(byte: number, index: number): never {
    const what = JSON.stringify(String.fromCharCode(byte));
    throw new JsonArraySyntaxError(
      `unexpected ${what} at byte ${this.offset + index + 1} of the upload`,
    );
  }
}
