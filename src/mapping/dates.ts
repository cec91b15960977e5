/**
 * `$parseDate` and `$formatDate`: dates read and written with an explicit format, because an HR
 * export's `03/01/2027` is the 1st of March or the 3rd of January depending on who wrote it.
 * Tokens: YYYY, YY, MM, M, DD, D, HH, H, mm, ss; any other character is itself.
 */
import { MappingFunctionError } from './function-error.js';

type Part = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second';

interface Token {
  text: string;
  part: Part;
  /** Digits the token reads: exactly `min` = `max`, or one to two. */
  min: number;
  max: number;
}

const TOKENS: readonly Token[] = [
  { text: 'YYYY', part: 'year', min: 4, max: 4 },
  { text: 'YY', part: 'year', min: 2, max: 2 },
  { text: 'MM', part: 'month', min: 2, max: 2 },
  { text: 'M', part: 'month', min: 1, max: 2 },
  { text: 'DD', part: 'day', min: 2, max: 2 },
  { text: 'D', part: 'day', min: 1, max: 2 },
  { text: 'HH', part: 'hour', min: 2, max: 2 },
  { text: 'H', part: 'hour', min: 1, max: 2 },
  { text: 'mm', part: 'minute', min: 2, max: 2 },
  { text: 'ss', part: 'second', min: 2, max: 2 },
];

type Piece = { token: Token } | { literal: string };

const compiled = new Map<string, { pieces: Piece[]; pattern: RegExp }>();

function tokenize(format: string): Piece[] {
  const pieces: Piece[] = [];
  let at = 0;
  while (at < format.length) {
    const token = TOKENS.find((candidate) => format.startsWith(candidate.text, at));
    if (token !== undefined) {
      pieces.push({ token });
      at += token.text.length;
    } else {
      pieces.push({ literal: format[at] });
      at += 1;
    }
  }
  return pieces;
}

/** Longest date format, and longest date text read: a date is short. */
const MAX_FORMAT_CHARS = 40;
const MAX_DATE_CHARS = 64;

/**
 * Refuses a format whose pattern could backtrack without end: one-or-two-digit tokens (M, D, H)
 * side by side with another token (`MDMDMD…`) let the digits split in many ways, and say
 * nothing a reader could tell apart either (`1112` is 1/11 or 11/1).
 */
function checkFormat(format: string, pieces: readonly Piece[]): void {
  if (format.length > MAX_FORMAT_CHARS) {
    throw new MappingFunctionError(`the date format is longer than ${MAX_FORMAT_CHARS} characters`);
  }
  for (let index = 1; index < pieces.length; index++) {
    const [before, after] = [pieces[index - 1]!, pieces[index]!];
    if (!('token' in before) || !('token' in after)) continue;
    if (before.token.min !== before.token.max || after.token.min !== after.token.max) {
      throw new MappingFunctionError(
        `the date format "${format}" puts ${before.token.text} and ${after.token.text} side by ` +
          'side: a one-or-two-digit part needs a separator (MM/DD, not MD)',
      );
    }
  }
}

function compile(format: string): { pieces: Piece[]; pattern: RegExp } {
  let found = compiled.get(format);
  if (found === undefined) {
    const pieces = tokenize(format.slice(0, MAX_FORMAT_CHARS + 1));
    checkFormat(format, pieces);
    const source = pieces
      .map((piece) =>
        'token' in piece
          ? `(\\d{${piece.token.min},${piece.token.max}})`
          : piece.literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('');
    found = { pieces, pattern: new RegExp(`^${source}$`) };
    if (compiled.size < 100) compiled.set(format, found);
  }
  return found;
}

interface DateParts {
  year: number;
  month: number;
  day: number;
  hour?: number;
  minute?: number;
  second?: number;
}

const ISO_DATE = 'YYYY-MM-DD';
const ISO_DATE_TIME = 'YYYY-MM-DDTHH:mm:ss';

function readParts(text: string, format: string): DateParts {
  const { pieces, pattern } = compile(format);
  const match = text.length > MAX_DATE_CHARS ? null : pattern.exec(text.trim());
  if (match === null) {
    const shown = text.length > MAX_DATE_CHARS ? `${text.slice(0, MAX_DATE_CHARS)}…` : text;
    throw new MappingFunctionError(`"${shown}" does not match the date format "${format}"`);
  }
  const parts: Partial<Record<Part, number>> = {};
  let group = 1;
  for (const piece of pieces) {
    if (!('token' in piece)) continue;
    let value = Number(match[group++]);
    if (piece.token.text === 'YY') value += value < 70 ? 2000 : 1900;
    parts[piece.token.part] = value;
  }
  if (parts.year === undefined || parts.month === undefined || parts.day === undefined) {
    throw new MappingFunctionError(`the date format "${format}" needs a year, a month and a day`);
  }
  const date = new Date(Date.UTC(parts.year, parts.month - 1, parts.day));
  const valid =
    date.getUTCFullYear() === parts.year &&
    date.getUTCMonth() === parts.month - 1 &&
    date.getUTCDate() === parts.day &&
    (parts.hour ?? 0) < 24 &&
    (parts.minute ?? 0) < 60 &&
    (parts.second ?? 0) < 60;
  if (!valid) throw new MappingFunctionError(`"${text}" is not a real date (format "${format}")`);
  return parts as DateParts;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

function writeParts(parts: DateParts, format: string): string {
  return compile(format)
    .pieces.map((piece) => {
      if (!('token' in piece)) return piece.literal;
      const value = parts[piece.token.part] ?? 0;
      if (piece.token.text === 'YY') return pad(value % 100, 2);
      return pad(value, piece.token.min);
    })
    .join('');
}

function hasTime(format: string): boolean {
  return compile(format).pieces.some((piece) => 'token' in piece && piece.token.part === 'hour');
}

/** A date read with `format`, as ISO 8601 (`2027-03-01`, or with `T10:30:00` when it has a time); empty text gives nothing. */
export function parseDate(text: string, format: string): string | undefined {
  if (text.trim() === '') return undefined;
  return writeParts(readParts(text, format), hasTime(format) ? ISO_DATE_TIME : ISO_DATE);
}

/** A date written with `format`; read as ISO 8601 unless `inputFormat` says otherwise. */
export function formatDate(text: string, format: string, inputFormat?: string): string | undefined {
  if (text.trim() === '') return undefined;
  const from = inputFormat ?? (text.trim().length > ISO_DATE.length ? ISO_DATE_TIME : ISO_DATE);
  return writeParts(
    readParts(inputFormat === undefined ? text.trim().slice(0, 19) : text, from),
    format,
  );
}
