/**
 * A CSV tokenizer on raw bytes (RFC 4180 quoting), fed chunk by chunk. It builds no exception
 * for ordinary input: blank lines only move the line count, and a row of any length is data.
 *
 * - A record ends at LF, CRLF or a lone CR, whichever each line uses (mixed endings allowed);
 *   line breaks inside quotes are kept as written and counted as lines.
 * - A blank line (nothing between two line breaks) produces no record.
 * - A record longer than `maxRecordBytes` stops being kept: the tokenizer reads on to its end
 *   and produces it as `tooLarge`, so memory holds at most one record of that size.
 * - Syntax errors (a stray or unclosed quote) are thrown as CsvSyntaxError, once per upload.
 */

import { isAscii } from 'node:buffer';

const QUOTE = 0x22;
/** Most cells a record's list is made for before its first cell (more are added as they come). */
const PRESIZED_CELLS = 64;
const LF = 0x0a;
const CR = 0x0d;

export interface CsvRecord {
  /** The cells, decoded; empty for a record that was too large. */
  cells: string[];
  /** Line the record starts on. */
  line: number;
  /** Its size in the upload, in bytes (line break excluded). */
  bytes: number;
  /** Set when the record was larger than the limit: its size in bytes. */
  tooLarge?: number;
}

/** A syntax error, located by the line its record starts on. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
    readonly csvCode: string,
  ) {
    super(reason);
    this.name = 'CsvSyntaxError';
  }
}

export const CSV_REASONS = {
  CSV_QUOTE_NOT_CLOSED: 'a quoted value is never closed (a closing " is missing)',
  CSV_INVALID_CLOSING_QUOTE:
    'a quoted value is followed by other characters before the next delimiter (write a " inside a quoted value as "")',
  INVALID_OPENING_QUOTE:
    'a " appears inside a value that is not quoted (quote the value and write the inner " as "")',
} as const;

const enum State {
  /** Before the first byte of a record. */
  RecordStart,
  /** After a delimiter: a cell begins. */
  CellStart,
  Unquoted,
  Quoted,
  /** A quote inside a quoted cell: a second quote, a delimiter or a line break must follow. */
  QuoteInQuoted,
}

/** Feed it chunks with `write`, then call `end`; see the file comment. */
export class CsvTokenizer {
  private state = State.RecordStart;
  /** Outside quotes, a CR ended the last chunk: an LF first in the next one is the same break. */
  private crPending = false;
  /** Inside quotes, the last byte seen was a CR. */
  private quotedCr = false;
  /** Stream offset of the current chunk's first byte. */
  private offset = 0;
  /** Line of the next byte. */
  private line = 1;
  private recordLine = 1;
  private recordStart = 0;
  private tooLarge = false;
  private cells: string[] = [];
  /** Cells of the record so far: `cells` is made as long as the record before it. */
  private cellCount = 0;
  /** Pieces of the current cell from earlier chunks (or before a doubled quote). */
  private pieces: Uint8Array[] = [];
  /**
   * The chunk being tokenized as text when it is all ASCII (bytes and characters then line up):
   * a cell is a slice of it, not a decoding of its own.
   */
  private text: string | undefined;

  constructor(
    private readonly delimiter: number,
    private readonly maxRecordBytes: number,
  ) {}

  /** Bytes of the record in progress held in memory (about the limit at most). */
  get bufferedBytes(): number {
    let total = 0;
    for (let index = 0; index < this.cellCount; index++) total += this.cells[index]!.length;
    for (const piece of this.pieces) total += piece.length;
    return total;
  }

  /** Where the record in progress (or the next one) starts, and which cell is being read. */
  position(): { line: number; cell: number } {
    if (this.state === State.RecordStart) return { line: this.line, cell: 0 };
    return { line: this.recordLine, cell: this.cellCount };
  }

  /** Tokenizes one chunk; completed records are appended to `out`. */
  write(chunk: Uint8Array, out: CsvRecord[]): void {
    // one Buffer view per chunk: cells are decoded from it without a view each
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    const length = bytes.length;
    const delimiter = this.delimiter;
    this.text = isAscii(bytes) ? bytes.toString('latin1') : undefined;
    let index = 0;
    if (this.crPending && length > 0) {
      this.crPending = false;
      if (bytes[0] === LF) index = 1;
    }
    /** Start of the open cell's bytes in this chunk. */
    let start = index;
    while (index < length) {
      switch (this.state) {
        case State.RecordStart: {
          const byte = bytes[index];
          if (byte !== LF && byte !== CR) {
            this.recordLine = this.line;
            this.recordStart = this.offset + index;
            this.state = State.CellStart;
            continue;
          }
          // a blank line: no record, no allocation
          index = this.lineBreak(bytes, index);
          continue;
        }
        case State.CellStart:
          if (bytes[index] === QUOTE) {
            this.state = State.Quoted;
            this.quotedCr = false;
            index++;
          } else {
            this.state = State.Unquoted;
          }
          start = index;
          continue;
        case State.Unquoted: {
          let at = index;
          let byte = 0;
          while (at < length) {
            byte = bytes[at];
            if (byte === delimiter || byte === LF || byte === CR || byte === QUOTE) break;
            at++;
          }
          if (at === length) {
            this.keep(bytes, start, at);
            index = at;
          } else if (byte === QUOTE) {
            throw this.syntaxError('INVALID_OPENING_QUOTE');
          } else {
            this.endCell(bytes, start, at);
            index = this.afterCell(bytes, at, out);
          }
          continue;
        }
        case State.Quoted: {
          const quote = bytes.indexOf(QUOTE, index);
          const end = quote === -1 ? length : quote;
          this.countQuotedLineBreaks(bytes, index, end);
          this.keep(bytes, start, end);
          index = end;
          if (quote !== -1) {
            index = quote + 1;
            start = index;
            this.state = State.QuoteInQuoted;
          }
          continue;
        }
        case State.QuoteInQuoted: {
          const byte = bytes[index];
          if (byte === QUOTE) {
            // a doubled quote is one quote of the value
            this.keep(bytes, index, index + 1);
            index++;
            start = index;
            this.state = State.Quoted;
            this.quotedCr = false;
          } else if (byte === delimiter || byte === LF || byte === CR) {
            this.endCell(bytes, index, index);
            index = this.afterCell(bytes, index, out);
          } else {
            throw this.syntaxError('CSV_INVALID_CLOSING_QUOTE');
          }
          continue;
        }
      }
    }
    this.offset += length;
    this.text = undefined;
    if (
      this.state !== State.RecordStart &&
      !this.tooLarge &&
      this.offset - this.recordStart > this.maxRecordBytes
    ) {
      // stop keeping the record; it is read to its end and produced as too large
      this.tooLarge = true;
      this.cells = [];
      this.cellCount = 0;
      this.pieces = [];
    }
  }

  /** Ends the upload: the last record may lack its line break; an open quote is an error. */
  end(out: CsvRecord[]): void {
    if (this.state === State.RecordStart) return;
    if (this.state === State.Quoted) throw this.syntaxError('CSV_QUOTE_NOT_CLOSED');
    this.endCell(EMPTY, 0, 0);
    this.emit(out, this.offset);
  }

  private syntaxError(code: keyof typeof CSV_REASONS): CsvSyntaxError {
    return new CsvSyntaxError(this.recordLine, CSV_REASONS[code], code);
  }

  /** Keeps bytes of the open cell (until the record is known to be too large). */
  private keep(bytes: Buffer, from: number, to: number): void {
    if (to > from && !this.tooLarge) this.pieces.push(bytes.subarray(from, to));
  }

  private endCell(bytes: Buffer, from: number, to: number): void {
    if (this.tooLarge) return;
    if (this.pieces.length === 0) {
      if (to === from) this.addCell('');
      else if (this.text !== undefined) this.addCell(this.text.slice(from, to));
      else this.addCell(bytes.toString('utf8', from, to));
      return;
    }
    if (to > from) this.pieces.push(bytes.subarray(from, to));
    const whole = Buffer.concat(this.pieces);
    this.pieces = [];
    this.addCell(whole.toString('utf8'));
  }

  private addCell(cell: string): void {
    if (this.cellCount < this.cells.length) this.cells[this.cellCount] = cell;
    else this.cells.push(cell);
    this.cellCount++;
  }

  /** After a cell ended at `at` (a delimiter or a line break): returns where to go on. */
  private afterCell(bytes: Buffer, at: number, out: CsvRecord[]): number {
    if (bytes[at] === this.delimiter) {
      this.state = State.CellStart;
      return at + 1;
    }
    this.emit(out, this.offset + at);
    return this.lineBreak(bytes, at);
  }

  /** Steps over the line break at `at` (CRLF as one, even split across chunks). */
  private lineBreak(bytes: Buffer, at: number): number {
    this.line++;
    if (bytes[at] === LF) return at + 1;
    if (at + 1 === bytes.length) {
      this.crPending = true;
      return at + 1;
    }
    return bytes[at + 1] === LF ? at + 2 : at + 1;
  }

  private emit(out: CsvRecord[], end: number): void {
    const size = end - this.recordStart;
    if (this.tooLarge || size > this.maxRecordBytes) {
      out.push({ cells: [], line: this.recordLine, bytes: size, tooLarge: size });
    } else {
      const { cells, cellCount } = this;
      if (cells.length !== cellCount) cells.length = cellCount;
      out.push({ cells, line: this.recordLine, bytes: size });
    }
    // rows are mostly as long as the one before: its length (up to a bound) saves growing the
    // next one
    this.cells = new Array<string>(Math.min(this.cellCount, PRESIZED_CELLS));
    this.cellCount = 0;
    this.pieces = [];
    this.tooLarge = false;
    this.state = State.RecordStart;
  }

  /** Counts line breaks inside a quoted value: CRLF once, also split across chunks. */
  private countQuotedLineBreaks(bytes: Buffer, from: number, to: number): void {
    let cr = this.quotedCr;
    for (let at = from; at < to; at++) {
      const byte = bytes[at];
      if (byte === LF) {
        if (!cr) this.line++;
        cr = false;
      } else if (byte === CR) {
        this.line++;
        cr = true;
      } else {
        cr = false;
      }
    }
    this.quotedCr = cr;
  }
}

const EMPTY = Buffer.alloc(0);
