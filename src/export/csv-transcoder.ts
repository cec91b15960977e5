/**
 * CSV lines written straight from the bytes of a GET answer's JSON array, with no record
 * objects and no decoding: a record whose keys are fields of the answer schema in its order,
 * whose strings need no unescaping and whose group references are plain names is copied field by
 * field into its line, checked by the answer schema's own field checks (fast-record-check.ts) as
 * it is read. Everything else (an unknown or misplaced key, an escape, a value to make
 * formula-safe, a group to look up or warn of, anything malformed) is handed back whole as the
 * element's parsed value, for the general way (check, toPortable, csvLine); so the lines are byte
 * for byte what that way writes, at a fraction of the cost, and the general way keeps every rule.
 *
 * The array around the records, and records cut by a chunk's end, are json-array-walker.ts's.
 */
import { isUtf8 } from 'node:buffer';
import type { FieldCheck } from '../admin/fast-record-check.js';
import { parseElement } from '../admin/json-array-splitter.js';
import { JsonArrayWalker } from '../admin/json-array-walker.js';
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
import { ElementEnd } from '../util/element-end.js';

const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const LINE_FEED = 0x0a;
const PIPE = 0x7c;
const APOSTROPHE = 0x27;
const EMPTY_OBJECT = Buffer.from('{}');
/** Bytes that end the quick scan of a string: its quote, an escape, a control, a comma, non-ASCII. */
const STRING_STOPS = new Uint8Array(256).map((_, byte) =>
  byte === QUOTE || byte === BACKSLASH || byte < 0x20 || byte === COMMA || byte >= 0x80 ? 1 : 0,
);
/** The element ran past the bytes there are. */
const INCOMPLETE = -1;
/** The element takes the general way. */
const GENERAL = -2;
/** A key is not the field's. */
const NO_MATCH = -3;
/** Longer than any field's name: an unknown key is told from a cut one. */
const MAX_KEY = 64;
/** Bytes of lines one slab holds. */
const SLAB_BYTES = 1024 * 1024;
/** Digits of an integer copied as they are: String(Number(text)) gives them back. */
const MAX_DIGITS = 15;

/** The fields of an answer record and how each becomes a cell. */
export interface TranscodePlan {
  /** The answer schema's fields, in its order, with their checks. */
  fields: readonly FieldCheck[];
  /** The CSV's field columns, a subsequence of the fields; the (empty) marker column follows. */
  columns: readonly string[];
  /** Fields of group ids, written as references: a list (users' groups) or one (ACLs' groupId). */
  references: Readonly<Record<string, 'list' | 'single'>>;
  /** The reference to write for a group, when it needs no look-up and no warning. */
  referenceOf(id: number, inList: boolean): string | undefined;
  /** The cell of a value read the general way (formula-safe, quoted when it must be). */
  cellOf(value: unknown): string;
  /** The text of a string cell, formula-safe and quoted when it must be. */
  stringCell(text: string): string;
  /** A list whose cell would hide a warning (a string holding the list separator). */
  warnsOf(value: unknown): boolean;
}

/** What one chunk gave: CSV bytes, and in order with them the elements for the general way. */
export type TranscodedPart = Buffer | { element: unknown };

interface Field {
  key: Buffer;
  check: FieldCheck;
  /** Column index, or -1 when the field is checked but not written. */
  column: number;
  reference: 'list' | 'single' | undefined;
  acceptsNull: boolean;
  acceptsTrue: boolean;
  acceptsFalse: boolean;
  acceptsEmptyObject: boolean;
  /** Any string meets the check (a string field, or a nullable one without a minimum length). */
  acceptsStrings: boolean;
}

/** A group's reference as bytes, and whether it may start a cell or sit in one unquoted. */
interface Reference {
  bytes: Buffer;
  startsFormula: boolean;
  needsQuotes: boolean;
}

/** A first byte after which formulaSafe puts a quote (tab and CR never stand raw in JSON). */
function mayStartFormula(byte: number): boolean {
  return byte === 0x3d || byte === 0x2b || byte === MINUS || byte === 0x40;
}

function isDigit(byte: number): boolean {
  return byte >= ZERO && byte <= NINE;
}

/** Feed it the answer's chunks with write(), then call end(). */
export class CsvTranscoder extends JsonArrayWalker {
  private readonly fields: Field[];
  private readonly requiredCount: number;
  private readonly columnCount: number;
  private readonly references = [new Map<number, Reference>(), new Map<number, Reference>()];
  private out = Buffer.alloc(0);
  private at = 0;
  private flushed = 0;
  private parts: TranscodedPart[] = [];
  /** Records written here (not handed back) so far. */
  written = 0;

  constructor(private readonly plan: TranscodePlan) {
    super();
    let column = 0;
    this.fields = plan.fields.map((check) => {
      const position = plan.columns.indexOf(check.key, column);
      if (position !== -1) column = position + 1;
      const accepts = (value: unknown): boolean => check.kind === 'other' && check.accepts(value);
      return {
        key: Buffer.from(check.key, 'utf8'),
        check,
        column: position,
        reference: plan.references[check.key],
        acceptsNull: accepts(null),
        acceptsTrue: accepts(true),
        acceptsFalse: accepts(false),
        acceptsEmptyObject: accepts({}),
        acceptsStrings: check.kind === 'string' || (accepts('') && accepts('a')),
      };
    });
    this.requiredCount = plan.fields.filter((field) => field.required).length;
    this.columnCount = plan.columns.length;
  }

  /**
   * Reads one chunk; returns its CSV bytes and the elements left to the general way, in order,
   * and how many records its bytes hold.
   */
  write(chunk: Buffer): { parts: TranscodedPart[]; records: number } {
    const before = this.written;
    this.parts = [];
    // the lines go on in the slab after the last chunk's (a line is about half its JSON), so
    // a run allocates a slab per SLAB_BYTES of lines, not a buffer per chunk
    if (this.out.length - this.at < chunk.length + 4096) {
      this.out = Buffer.allocUnsafe(Math.max(SLAB_BYTES, chunk.length + 4096));
      this.at = 0;
    }
    this.flushed = this.at;
    this.walk(chunk);
    this.flush();
    return { parts: this.parts, records: this.written - before };
  }

  /**
   * One element from `start`: written as a line, or handed back parsed. Returns its end, or -1
   * when the chunk ends inside it (then carried). `whole`: the bytes are the element, all of it.
   */
  protected element(buf: Buffer, start: number, whole: boolean): number {
    // after the last flush: reserve() may move what is not flushed yet to a new slab
    const mark = this.at - this.flushed;
    const read = buf[start] === OPEN_BRACE ? this.object(buf, start) : GENERAL;
    if (read >= 0) {
      this.written++;
      return read;
    }
    this.at = this.flushed + mark;
    const end = whole ? buf.length : this.endOrCarry(buf, start);
    if (end === -1) return -1;
    this.flush();
    this.parts.push({ element: parseElement(buf.subarray(start, end)) });
    return end;
  }

  /** An object on the quick way: its line's end, INCOMPLETE or GENERAL. */
  private object(buf: Buffer, start: number): number {
    const length = buf.length;
    const fields = this.fields;
    let next = 0;
    let required = 0;
    let column = 0;
    let pos = skipBlanks(buf, start + 1);
    if (pos >= length) return INCOMPLETE;
    if (buf[pos] !== CLOSE_BRACE) {
      for (;;) {
        if (buf[pos] !== QUOTE) return GENERAL;
        // the key is the next field's name, or a later one's (fields may be left out)
        const keyStart = pos + 1;
        let position = next;
        let matched = NO_MATCH;
        while (position < fields.length) {
          matched = keyAt(buf, keyStart, fields[position]!.key);
          if (matched !== NO_MATCH) break;
          position++;
        }
        // an unknown key, one out of the schema's order, one met twice, or one with an escape
        if (position === fields.length) return keyStart + MAX_KEY < length ? GENERAL : INCOMPLETE;
        next = position + 1;
        const field = fields[position]!;
        pos = skipBlanks(buf, matched);
        if (pos >= length) return INCOMPLETE;
        if (buf[pos] !== COLON) return GENERAL;
        pos = skipBlanks(buf, pos + 1);
        if (pos >= length) return INCOMPLETE;
        if (field.column >= 0) {
          this.commas(field.column - column);
          column = field.column + 1;
        }
        pos = this.value(buf, pos, field);
        if (pos < 0) return pos;
        if (field.column >= 0) this.byte(COMMA);
        if (field.check.required) required++;
        pos = skipBlanks(buf, pos);
        if (pos >= length) return INCOMPLETE;
        const after = buf[pos]!;
        if (after === CLOSE_BRACE) break;
        if (after !== COMMA) return GENERAL;
        pos = skipBlanks(buf, pos + 1);
        if (pos >= length) return INCOMPLETE;
      }
    }
    if (required !== this.requiredCount) return GENERAL;
    this.commas(this.columnCount - column);
    this.byte(LINE_FEED);
    return pos + 1;
  }

  /** One value of a field: its end, INCOMPLETE or GENERAL; its cell written when it is a column. */
  private value(buf: Buffer, pos: number, field: Field): number {
    const byte = buf[pos]!;
    if (byte === QUOTE) return this.string(buf, pos, field);
    if (isDigit(byte)) return this.integer(buf, pos, field);
    if (byte === OPEN_BRACKET && field.reference === 'list' && field.column >= 0) {
      return this.referenceList(buf, pos);
    }
    if (field.reference !== undefined) return GENERAL;
    if (byte === 0x6e) return this.literal(buf, pos, 'null', field.acceptsNull, field, '');
    if (byte === 0x74) return this.literal(buf, pos, 'true', field.acceptsTrue, field, 'true');
    if (byte === 0x66) return this.literal(buf, pos, 'false', field.acceptsFalse, field, 'false');
    if (byte === OPEN_BRACE && field.acceptsEmptyObject) {
      const close = skipBlanks(buf, pos + 1);
      if (close >= buf.length) return INCOMPLETE;
      if (buf[close] === CLOSE_BRACE) {
        if (field.column >= 0) this.copy(EMPTY_OBJECT, 0, EMPTY_OBJECT.length);
        return close + 1;
      }
    }
    return this.parsedValue(buf, pos, field);
  }

  /**
   * A string, copied as it is scanned (the cell's quote and formula prefix, rarely needed, are
   * made room for afterwards); nothing is kept unless it ends as a plain cell.
   */
  private string(buf: Buffer, pos: number, field: Field): number {
    if (field.reference !== undefined) return GENERAL;
    const length = buf.length;
    const from = pos + 1;
    // the cell is at most the string's bytes, two quotes and a formula prefix
    this.reserve(length - from + 3);
    const out = this.out;
    const start = this.at;
    let at = start;
    let index = from;
    let comma = false;
    let high = false;
    for (;;) {
      let byte = 0;
      while (index < length && STRING_STOPS[(byte = buf[index]!)] === 0) {
        out[at++] = byte;
        index++;
      }
      if (index >= length) return INCOMPLETE;
      if (byte === QUOTE) break;
      if (byte === BACKSLASH) return this.parsedValue(buf, pos, field);
      if (byte < 0x20) return GENERAL;
      if (byte === COMMA) comma = true;
      else high = true;
      out[at++] = byte;
      index++;
    }
    if (!field.acceptsStrings) return this.parsedValue(buf, pos, field);
    if (field.column < 0 || index === from) return index + 1;
    const first = buf[from]!;
    if (first === APOSTROPHE || (high && !isUtf8(buf.subarray(from, index)))) {
      // quotes before a trigger, or invalid UTF-8 decoded as the general way decodes it
      this.text(this.plan.stringCell(buf.toString('utf8', from, index)));
      return index + 1;
    }
    // formulaSafe puts one quote before a trigger; csvCell quotes a cell holding a comma
    const prefix = mayStartFormula(first);
    if (comma || prefix) {
      const shift = (comma ? 1 : 0) + (prefix ? 1 : 0);
      out.copyWithin(start + shift, start, at);
      if (comma) out[start] = QUOTE;
      if (prefix) out[start + shift - 1] = APOSTROPHE;
      at += shift;
      if (comma) out[at++] = QUOTE;
    }
    this.at = at;
    return index + 1;
  }

  /** Digits with no sign, fraction or exponent, as many as a double holds exactly. */
  private integer(buf: Buffer, pos: number, field: Field): number {
    const length = buf.length;
    let index = pos;
    let id = 0;
    while (index < length && isDigit(buf[index]!)) id = id * 10 + buf[index++]! - ZERO;
    if (index >= length) return INCOMPLETE;
    const digits = index - pos;
    const after = buf[index]!;
    const plain =
      digits <= MAX_DIGITS &&
      (digits === 1 || buf[pos] !== ZERO) &&
      (after === COMMA || after === CLOSE_BRACE || isWhitespace(after));
    if (!plain || field.check.kind !== 'safe-integer') return this.parsedValue(buf, pos, field);
    if (field.column < 0) return index;
    if (field.reference === 'single') {
      const reference = this.reference(id, false);
      if (reference === undefined || reference.needsQuotes || reference.startsFormula) {
        return GENERAL;
      }
      this.copy(reference.bytes, 0, reference.bytes.length);
    } else this.copy(buf, pos, index);
    return index;
  }

  /** A list of group ids, written as their references joined by the list separator. */
  private referenceList(buf: Buffer, pos: number): number {
    const length = buf.length;
    let index = skipBlanks(buf, pos + 1);
    let first = true;
    if (index >= length) return INCOMPLETE;
    if (buf[index] === CLOSE_BRACKET) return index + 1;
    for (;;) {
      const from = index;
      let id = 0;
      while (index < length && isDigit(buf[index]!)) id = id * 10 + buf[index++]! - ZERO;
      if (index >= length) return INCOMPLETE;
      const digits = index - from;
      if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && buf[from] === ZERO)) {
        return GENERAL;
      }
      const reference = this.reference(id, true);
      if (reference === undefined || reference.needsQuotes) return GENERAL;
      if (first && reference.startsFormula) return GENERAL;
      if (!first) this.byte(PIPE);
      this.copy(reference.bytes, 0, reference.bytes.length);
      first = false;
      index = skipBlanks(buf, index);
      if (index >= length) return INCOMPLETE;
      const byte = buf[index]!;
      if (byte === CLOSE_BRACKET) return index + 1;
      if (byte !== COMMA) return GENERAL;
      index = skipBlanks(buf, index + 1);
      if (index >= length) return INCOMPLETE;
    }
  }

  private literal(
    buf: Buffer,
    pos: number,
    word: string,
    accepted: boolean,
    field: Field,
    cell: string,
  ): number {
    if (pos + word.length > buf.length) return INCOMPLETE;
    for (let index = 0; index < word.length; index++) {
      if (buf[pos + index] !== word.charCodeAt(index)) return GENERAL;
    }
    if (!accepted) return GENERAL;
    if (field.column >= 0 && cell !== '') this.text(cell);
    return pos + word.length;
  }

  /** A value the quick reads do not cover: its bytes parsed and checked, its cell made in JS. */
  private parsedValue(buf: Buffer, pos: number, field: Field): number {
    if (field.reference !== undefined) return GENERAL;
    const end = new ElementEnd().start(buf, pos);
    if (end === -1) return INCOMPLETE;
    let value: unknown;
    try {
      value = JSON.parse(buf.toString('utf8', pos, end));
    } catch {
      return GENERAL;
    }
    const { kind, accepts } = field.check;
    const meets =
      kind === 'string'
        ? typeof value === 'string'
        : kind === 'safe-integer'
          ? Number.isSafeInteger(value)
          : accepts(value);
    if (!meets || this.plan.warnsOf(value)) return GENERAL;
    if (field.column >= 0) this.text(this.plan.cellOf(value));
    return end;
  }

  /** A group's reference, when it can be written with nothing to look up or warn of. */
  private reference(id: number, inList: boolean): Reference | undefined {
    const known = this.references[inList ? 1 : 0]!;
    const cached = known.get(id);
    if (cached !== undefined) return cached;
    // not kept when there is none: a group being looked up has one later
    const text = this.plan.referenceOf(id, inList);
    if (text === undefined || text === '') return undefined;
    const reference: Reference = {
      bytes: Buffer.from(text, 'utf8'),
      startsFormula: text.charCodeAt(0) === APOSTROPHE || mayStartFormula(text.charCodeAt(0)),
      needsQuotes: /[",\n\r]/.test(text),
    };
    known.set(id, reference);
    return reference;
  }

  private flush(): void {
    if (this.at > this.flushed) this.parts.push(this.out.subarray(this.flushed, this.at));
    this.flushed = this.at;
  }

  /**
   * Room for `bytes` more. A full slab is left to the parts already handed out (never written
   * again): what is not flushed yet moves to a new one.
   */
  private reserve(bytes: number): void {
    if (this.at + bytes <= this.out.length) return;
    const pending = this.at - this.flushed;
    const next = Buffer.allocUnsafe(Math.max(SLAB_BYTES, 2 * (pending + bytes)));
    this.out.copy(next, 0, this.flushed, this.at);
    this.out = next;
    this.flushed = 0;
    this.at = pending;
  }

  private byte(value: number): void {
    this.reserve(1);
    this.out[this.at++] = value;
  }

  private commas(count: number): void {
    this.reserve(count);
    for (let index = 0; index < count; index++) this.out[this.at++] = COMMA;
  }

  private copy(source: Buffer, from: number, to: number): void {
    const length = to - from;
    this.reserve(length);
    const out = this.out;
    if (length > 24) {
      source.copy(out, this.at, from, to);
      this.at += length;
      return;
    }
    let at = this.at;
    for (let index = from; index < to; index++) out[at++] = source[index]!;
    this.at = at;
  }

  private text(value: string): void {
    this.reserve(Buffer.byteLength(value, 'utf8'));
    this.at += this.out.write(value, this.at, 'utf8');
  }
}

function skipBlanks(buf: Buffer, from: number): number {
  let pos = from;
  while (pos < buf.length && isWhitespace(buf[pos]!)) pos++;
  return pos;
}

/**
 * Whether the JSON key starting at `from` (after its opening quote) is `key`: its bytes, then the
 * closing quote (a field's name holds no quote or backslash). The index after that quote, or
 * NO_MATCH (also when the bytes end first: the caller tells a cut key from an unknown one).
 */
function keyAt(buf: Buffer, from: number, key: Buffer): number {
  const end = from + key.length;
  if (end >= buf.length) return NO_MATCH;
  if (buf[end] !== QUOTE) return NO_MATCH;
  for (let index = 0; index < key.length; index++) {
    if (buf[from + index] !== key[index]) return NO_MATCH;
  }
  return end + 1;
}
