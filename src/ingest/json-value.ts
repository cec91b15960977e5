/**
 * A strict JSON parser for one record's text. Unlike JSON.parse it does not let a record lose
 * or change data silently; what JSON.parse would hide becomes a problem of the record:
 *
 * - a key given twice in one object (JSON.parse keeps the last);
 * - a `__proto__` key (dropped by object spreads and many validators);
 * - a number that a double cannot keep exactly (JSON.parse changes it): an integer beyond
 *   2^53, `1e400` (Infinity, sent as null), `1e-400` (0), `9007199254740993.0`, any number with
 *   more digits than a double keeps. It is kept as the text written, so the report shows it
 *   unchanged, and its record fails;
 * - a string holding a lone surrogate (`"\uD800"`), which is not text and cannot be sent.
 *
 * Nesting deeper than `maxDepth` throws, so a hostile file cannot exhaust the stack.
 */

/** How deep a record may nest objects and arrays; a user or an ACL needs 3. */
export const MAX_JSON_DEPTH = 64;

/** At most this many problems are listed for one record; the rest are counted. */
const MAX_PROBLEMS = 20;

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
/** A code unit below U+0020 (JSON wants those escaped). */
const CONTROL_CHARACTER = /[^\u0020-\uffff]/;
const LONE_SURROGATE = /\p{Cs}/u;
/** Digits of the longest integer that is always exact (2^53 has 16). */
const SAFE_DIGITS = 15;

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * A decimal number's value in one spelling (`-123e-2` for `-1.230`), so that two texts compare
 * equal exactly when they write the same number; undefined for text that is not a decimal
 * (`Infinity`). Zero is `0` however it is written.
 */
function canonicalDecimal(text: string): string | undefined {
  const match = DECIMAL.exec(text);
  if (match === null) return undefined;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  const significant = digits.replace(/0+$/, '');
  // an exponent too long to count exactly is far beyond any double: Infinity or 0 differ anyway
  const scale = Number(exponent) - fraction.length + (digits.length - significant.length);
  return `${sign}${significant}e${scale}`;
}

/** Whether two decimal texts write the same number. */
function sameDecimal(written: string, read: string): boolean {
  const canonical = canonicalDecimal(written);
  return canonical !== undefined && canonical === canonicalDecimal(read);
}

/** How reading a number as a double would change it. */
function changedNumber(value: number): string {
  if (!Number.isFinite(value)) return 'is too large for a JSON number (it would become Infinity)';
  if (value === 0) return 'is too small for a JSON number (it would become 0)';
  return `has more digits than a JSON number keeps (it would become ${String(value)})`;
}

/** The text is not JSON, or nests deeper than the limit. */
export class JsonTextError extends Error {
  constructor(
    message: string,
    /** The nesting limit, when that is what was passed. */
    readonly depthLimit?: number,
  ) {
    super(message);
    this.name = 'JsonTextError';
  }
}

export interface JsonProblem {
  /** Keys (and array indexes) from the record down to the value. */
  path: ReadonlyArray<string | number>;
  message: string;
}

export interface ParsedJson {
  value: unknown;
  problems: JsonProblem[];
  /** Problems found beyond the ones listed. */
  moreProblems: number;
}

/** Parses one JSON text; throws JsonTextError when it is not JSON or nests too deep. */
export function parseJsonText(text: string, maxDepth = MAX_JSON_DEPTH): ParsedJson {
  const parser = new Parser(text, maxDepth);
  const value = parser.parse();
  return { value, problems: parser.problems, moreProblems: parser.moreProblems };
}

/** A path as people read it: `substitutionMap.__proto__`, `groups[2]`. */
export function showPath(path: ReadonlyArray<string | number>): string {
  let shown = '';
  for (const step of path) {
    shown += typeof step === 'number' ? `[${step}]` : shown === '' ? step : `.${step}`;
  }
  return shown.length > 80 ? `${shown.slice(0, 77)}...` : shown;
}

class Parser {
  private pos = 0;
  /** The last quote and backslash found (see next()). */
  private nextQuote = -1;
  private nextBackslash = -1;
  private readonly path: Array<string | number> = [];
  readonly problems: JsonProblem[] = [];
  moreProblems = 0;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  parse(): unknown {
    this.skipWhitespace();
    const value = this.value(0);
    this.skipWhitespace();
    if (this.pos < this.text.length) this.fail('more text after the value');
    return value;
  }

  private value(depth: number): unknown {
    const text = this.text;
    const code = text.charCodeAt(this.pos);
    switch (code) {
      case 0x7b: // {
        return this.object(depth + 1);
      case 0x5b: // [
        return this.array(depth + 1);
      case 0x22: // "
        return this.string();
      case 0x74: // t
        return this.literal('true', true);
      case 0x66: // f
        return this.literal('false', false);
      case 0x6e: // n
        return this.literal('null', null);
      default:
        if (code === 0x2d || (code >= 0x30 && code <= 0x39)) return this.number();
        return this.fail(Number.isNaN(code) ? 'the text ends where a value should be' : '');
    }
  }

  private object(depth: number): Record<string, unknown> {
    this.checkDepth(depth);
    const text = this.text;
    const object: Record<string, unknown> = {};
    this.pos++;
    this.skipWhitespace();
    if (text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return object;
    }
    for (;;) {
      if (text.charCodeAt(this.pos) !== 0x22) this.fail('a key (a quoted string) was expected');
      const key = this.string();
      this.skipWhitespace();
      if (text.charCodeAt(this.pos) !== 0x3a) this.fail('":" was expected after a key');
      this.pos++;
      this.skipWhitespace();
      this.path.push(key);
      const value = this.value(depth);
      if (key === '__proto__') {
        this.problem('the key "__proto__" is not accepted (it would be dropped, not stored)');
      } else if (Object.hasOwn(object, key)) {
        this.problem(`the key ${JSON.stringify(key)} appears twice in one object`);
      } else {
        object[key] = value;
      }
      this.path.pop();
      this.skipWhitespace();
      const next = text.charCodeAt(this.pos++);
      if (next === 0x7d) return object;
      if (next !== 0x2c) this.fail('"," or "}" was expected', this.pos - 1);
      this.skipWhitespace();
    }
  }

  private array(depth: number): unknown[] {
    this.checkDepth(depth);
    const text = this.text;
    const array: unknown[] = [];
    this.pos++;
    this.skipWhitespace();
    if (text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return array;
    }
    for (;;) {
      this.path.push(array.length);
      array.push(this.value(depth));
      this.path.pop();
      this.skipWhitespace();
      const next = text.charCodeAt(this.pos++);
      if (next === 0x5d) return array;
      if (next !== 0x2c) this.fail('"," or "]" was expected', this.pos - 1);
      this.skipWhitespace();
    }
  }

  private string(): string {
    const text = this.text;
    const start = this.pos + 1;
    let end = start;
    let escaped = false;
    for (;;) {
      const quote = this.next('"', end);
      if (quote === text.length) this.fail('a string is never closed', start - 1);
      const backslash = this.next('\\', end);
      if (backslash < quote) {
        escaped = true;
        end = backslash + 2;
        continue;
      }
      end = quote;
      break;
    }
    this.pos = end + 1;
    if (!escaped) {
      const raw = text.slice(start, end);
      if (CONTROL_CHARACTER.test(raw)) this.fail('a string holds an unescaped control character');
      return raw;
    }
    let decoded: string;
    try {
      decoded = JSON.parse(text.slice(start - 1, end + 1)) as string;
    } catch {
      return this.fail('a string holds a bad escape or control character', start - 1);
    }
    if (LONE_SURROGATE.test(decoded)) {
      this.problem('a string holds a lone surrogate (\\uD800-\\uDFFF alone is not a character)');
    }
    return decoded;
  }

  /**
   * Where the next quote or backslash at or after `from` is (the text's length when none). Each
   * is searched for again only once the reading has passed the last one found, so the text is
   * scanned once whatever its strings hold: a string of escapes, or many strings before one.
   */
  private next(char: '"' | '\\', from: number): number {
    const found = char === '"' ? this.nextQuote : this.nextBackslash;
    if (found >= from) return found;
    const at = this.text.indexOf(char, from);
    const position = at === -1 ? this.text.length : at;
    if (char === '"') this.nextQuote = position;
    else this.nextBackslash = position;
    return position;
  }

  private number(): number | string {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (match === null) return this.fail('a number is malformed');
    this.pos = NUMBER.lastIndex;
    const written = match[0];
    const value = Number(written);
    // fifteen digits or fewer, no exponent: always kept exactly (most numbers stop here)
    if (written.length <= SAFE_DIGITS && match[2] === undefined) return value;
    const integer = match[1] === undefined && match[2] === undefined;
    const unsafe = integer && !Number.isSafeInteger(value);
    if (!unsafe && sameDecimal(written, String(value))) return value;
    this.problem(
      unsafe
        ? `${written} is beyond the integers JSON numbers keep exactly (2^53); ` +
            'it would be rounded, so it is kept as written and not sent'
        : `${written} ${changedNumber(value)}; it is kept as written and not sent`,
    );
    return written;
  }

  private literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail('');
    this.pos += word.length;
    return value;
  }

  private skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const code = text.charCodeAt(pos);
      if (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) pos++;
      else break;
    }
    this.pos = pos;
  }

  private checkDepth(depth: number): void {
    if (depth > this.maxDepth) {
      throw new JsonTextError(
        `it nests objects and arrays deeper than ${this.maxDepth} levels, the limit`,
        this.maxDepth,
      );
    }
  }

  private problem(message: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ path: [...this.path], message });
    else this.moreProblems++;
  }

  private fail(what: string, at = this.pos): never {
    const found = this.text.charAt(at);
    const where = found === '' ? 'at the end' : `at character ${at + 1} (${JSON.stringify(found)})`;
    throw new JsonTextError(what === '' ? `unexpected text ${where}` : `${what} ${where}`);
  }
}
