/**
 * Splits a JSON array arriving in chunks into its elements. The elements a chunk completes are
 * parsed by a single JSON.parse, so a million small records cost a few thousand parses rather
 * than a million. Memory stays at one element plus one chunk.
 *
 * Where a chunk's complete elements end is found two ways. First a guess: the chunk's last `}`,
 * parsed with what came before it. JSON.parse accepting `[` + text + `]` proves the cut lies
 * between two elements of the array (cut inside a string or a nested value, the text cannot be
 * a list of complete values), so the guess costs no scan of the bytes at all. When the guess is
 * refused (the `}` was inside something, or the answer is malformed), the array's own structure
 * (depth, strings, commas) is scanned byte by byte, which finds the elements or names what is
 * wrong; every element's syntax is JSON.parse's to check.
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
  /** Bytes of the answer before the chunk being read. */
  private offset = 0;
  /** Chunks left to scan before guessing again, after guesses were refused. */
  private guessPause = 0;
  private guessesRefused = 0;
  /**
   * With `stopAtClose`, the bytes after the array's `]` in the chunk that closed it (a reader of
   * a larger document goes on from there); without it, such bytes are a syntax error.
   */
  trailing: Buffer | undefined;

  constructor(private readonly options: { stopAtClose?: boolean } = {}) {}

  /** The array's closing `]` was read. */
  get closed(): boolean {
    return this.kind === 'array' && this.expect === 'nothing';
  }

  /** Feeds one chunk; returns the elements it completed, parsed. */
  write(chunk: Buffer): unknown[] {
    if (this.kind !== 'array' || this.expect === 'nothing') return this.scan(chunk);
    if (this.guessPause > 0) {
      this.guessPause--;
      return this.scan(chunk);
    }
    const guessed = this.guess(chunk);
    if (guessed === undefined) {
      // elements larger than a chunk, say: guess less often, up to one chunk in 64
      this.guessesRefused++;
      this.guessPause = Math.min(2 ** this.guessesRefused, 64) - 1;
      return this.scan(chunk);
    }
    this.guessesRefused = 0;
    // the rest of the chunk (the start of the next element, usually) is scanned from the cut
    const rest = this.scan(chunk.subarray(guessed.end));
    return rest.length === 0 ? guessed.values : [...guessed.values, ...rest];
  }

  /**
   * The elements up to the chunk's last `}`, when JSON.parse accepts them as complete elements;
   * the state then says the cut is between two elements. Undefined (state untouched) otherwise.
   */
  private guess(chunk: Buffer): { values: unknown[]; end: number } | undefined {
    const last = chunk.lastIndexOf(CLOSE_BRACE);
    if (last === -1) return undefined;
    let text: string;
    if (this.inElement()) {
      // the carried bytes may end inside a character: they are decoded with the chunk's bytes
      // up to the first that starts one, the rest of the chunk without copying it
      let split = 0;
      while (split < 3 && split < last && (chunk[split]! & 0xc0) === 0x80) split++;
      const head = Buffer.concat([...this.carried, chunk.subarray(0, split)]).toString('utf8');
      text = head + chunk.toString('utf8', split, last + 1);
    } else {
      let begin = 0;
      while (begin < last && isWhitespace(chunk[begin]!)) begin++;
      if (this.expect === 'comma-or-close') {
        if (chunk[begin] !== COMMA) return undefined;
        begin++;
      }
      text = chunk.toString('utf8', begin, last + 1);
    }
    let values: unknown;
    try {
      values = JSON.parse(`[${text}]`);
    } catch {
      return undefined;
    }
    if (!Array.isArray(values)) return undefined;
    Object.assign(this, { depth: 0, inString: false, escaped: false, bare: false });
    this.carried = [];
    this.expect = 'comma-or-close';
    this.offset += last + 1;
    return { values, end: last + 1 };
  }

  /** Scans one chunk byte by byte; returns the elements it completed, parsed. */
  private scan(chunk: Buffer): unknown[] {
    const continued = this.inElement();
    // start and end (exclusive) of each element completed in this chunk; the first one starts
    // at 0 when it began in an earlier chunk
    const bounds: number[] = [];
    let start = continued ? 0 : -1;
    // the state lives in locals while the loop runs: this loop is the hot path of an export
    let { depth, inString, escaped, bare } = this;
    const length = chunk.length;
    try {
      scanning: for (let index = 0; index < length; index++) {
        const byte = chunk[index]!;
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) {
            inString = false;
            if (depth === 0) {
              bounds.push(start, index + 1);
              start = -1;
              this.expect = 'comma-or-close';
            }
          }
          continue;
        }
        if (depth > 0) {
          if (byte === QUOTE) inString = true;
          else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
          else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
            if (--depth === 0) {
              bounds.push(start, index + 1);
              start = -1;
              this.expect = 'comma-or-close';
            }
          }
          continue;
        }
        if (bare) {
          if (byte === COMMA || byte === CLOSE_BRACKET || isWhitespace(byte)) {
            bounds.push(start, index);
            start = -1;
            bare = false;
            this.afterElement(byte, index);
          }
          continue;
        }
        if (isWhitespace(byte)) continue;
        switch (this.expect) {
          case 'open':
            if (byte !== OPEN_BRACKET) {
              this.kind = 'other';
              this.expect = 'nothing';
              return [];
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
            if (byte === QUOTE) inString = true;
            else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth = 1;
            else bare = true;
            break;
          case 'comma-or-close':
            if (byte === COMMA) this.expect = 'element';
            else if (byte === CLOSE_BRACKET) this.expect = 'nothing';
            else this.fail(byte, index);
            break;
          case 'nothing':
            if (this.options.stopAtClose) {
              this.trailing = chunk.subarray(index);
              break scanning;
            }
            this.fail(byte, index);
        }
      }
    } finally {
      Object.assign(this, { depth, inString, escaped, bare });
    }
    const values = this.parse(chunk, bounds, continued);
    if (start !== -1) this.carried.push(chunk.subarray(start));
    this.offset += length;
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

  private afterElement(byte: number, index: number): void {
    this.expect = 'comma-or-close';
    if (byte === COMMA) this.expect = 'element';
    else if (byte === CLOSE_BRACKET) this.expect = 'nothing';
    else if (!isWhitespace(byte)) this.fail(byte, index);
  }

  /** The elements between `bounds`, parsed together; one by one when that fails. */
  private parse(chunk: Buffer, bounds: readonly number[], continued: boolean): unknown[] {
    const count = bounds.length / 2;
    if (count === 0) return [];
    const from = bounds[0]!;
    const piece = chunk.subarray(from, bounds[bounds.length - 1]);
    const bytes = continued ? Buffer.concat([...this.carried, piece]) : piece;
    this.carried = [];
    if (count > 1) {
      let values: unknown;
      try {
        // the separators between the elements were checked by the scan above
        values = JSON.parse(`[${bytes.toString('utf8')}]`);
      } catch {
        values = undefined;
      }
      if (Array.isArray(values) && values.length === count) return values;
    }
    // where chunk offsets fall in `bytes`: after the carried bytes, from `from` on
    const shift = bytes.length - piece.length - from;
    const values: unknown[] = [];
    for (let element = 0; element < count; element++) {
      const begin = element === 0 ? 0 : bounds[2 * element]! + shift;
      values.push(parseElement(bytes.subarray(begin, bounds[2 * element + 1]! + shift)));
    }
    return values;
  }

  private fail(byte: number, index: number): never {
    const what = JSON.stringify(String.fromCharCode(byte));
    throw new JsonSyntaxError(`unexpected ${what} at byte ${this.offset + index} of the array`);
  }
}

/** One element, parsed; a JsonSyntaxError when it is not JSON. */
export function parseElement(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (error) {
    throw new JsonSyntaxError(
      `an element of the array is not valid JSON: ${(error as Error).message}`,
    );
  }
}
