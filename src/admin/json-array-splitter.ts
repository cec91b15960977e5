/**
 * Splits a JSON array arriving in chunks into its elements, each parsed by JSON.parse as soon as
 * its last byte is in. Only the array's own structure is scanned here (depth, strings, commas);
 * every element's syntax is JSON.parse's to check. About twice as fast as a token parser, and
 * memory stays at one element plus one chunk.
 */

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** The array (not an element's content) is malformed, or an element is not JSON. */
export class JsonSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

type Expect = 'open' | 'element-or-close' | 'element' | 'comma-or-close' | 'nothing';

/** Feed it chunks with write(), then call end(); see the file comment. */
export class JsonArraySplitter {
  /** What the first non-blank byte said: an array, something else, or not seen yet. */
  kind: 'unknown' | 'array' | 'other' = 'unknown';
  private expect: Expect = 'open';
  /** Nesting inside the current element (0: between elements). */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The current element is a bare value (number, true, false, null) ended by , ] or blank. */
  private bare = false;
  /** Bytes of the current element from earlier chunks. */
  private carried: Buffer[] = [];
  private offset = 0;

  /** Feeds one chunk; returns the elements it completed, parsed. */
  write(chunk: Buffer): unknown[] {
    const values: unknown[] = [];
    let start = this.inElement() ? 0 : -1;
    let nextBackslash = -2;
    for (let index = 0; index < chunk.length; index++) {
      const byte = chunk[index]!;
      if (this.inElement()) {
        if (this.bare) {
          if (byte === COMMA || byte === CLOSE_BRACKET || isWhitespace(byte)) {
            values.push(this.finish(chunk, start, index));
            start = -1;
            this.afterElement(byte, index);
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
          const quote = chunk.indexOf(QUOTE, index);
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
            values.push(this.finish(chunk, start, index + 1));
            start = -1;
          }
          continue;
        }
        if (byte === QUOTE) this.inString = true;
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++;
        else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
          this.depth--;
          if (this.depth === 0) {
            values.push(this.finish(chunk, start, index + 1));
            start = -1;
          }
        }
        continue;
      }
      if (isWhitespace(byte)) continue;
      switch (this.expect) {
        case 'open':
          if (byte !== OPEN_BRACKET) {
            this.kind = 'other';
            this.expect = 'nothing';
            return values;
          }
          this.kind = 'array';
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
    if (start !== -1) this.carried.push(chunk.subarray(start));
    this.offset += chunk.length;
    return values;
  }

  /** Ends the input; throws when an array began and was not closed. */
  end(): void {
    if (this.kind !== 'array') return;
    if (this.expect !== 'nothing' || this.inElement()) {
      throw new JsonSyntaxError(`the answer ended before its array closed (${this.offset} bytes)`);
    }
  }

  private inElement(): boolean {
    return this.depth > 0 || this.inString || this.bare;
  }

  private beginElement(byte: number): void {
    if (byte === QUOTE) this.inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth = 1;
    else this.bare = true;
  }

  private afterElement(byte: number, index: number): void {
    this.expect = 'comma-or-close';
    if (byte === COMMA) this.expect = 'element';
    else if (byte === CLOSE_BRACKET) this.expect = 'nothing';
    else if (!isWhitespace(byte)) this.fail(byte, index);
  }

  private finish(chunk: Buffer, start: number, end: number): unknown {
    const piece = chunk.subarray(Math.max(0, start), end);
    const bytes = this.carried.length > 0 ? Buffer.concat([...this.carried, piece]) : piece;
    this.carried = [];
    this.bare = false;
    this.expect = 'comma-or-close';
    try {
      return JSON.parse(bytes.toString('utf8')) as unknown;
    } catch (error) {
      throw new JsonSyntaxError(
        `an element of the array is not valid JSON: ${(error as Error).message}`,
      );
    }
  }

  private fail(byte: number, index: number): never {
    const what = JSON.stringify(String.fromCharCode(byte));
    throw new JsonSyntaxError(`unexpected ${what} at byte ${this.offset + index} of the array`);
  }
}
