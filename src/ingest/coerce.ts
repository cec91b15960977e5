/**
 * Turns one input value into a field value of the right kind. CSV cells are text; JSON values
 * are typed already and are accepted when correctly typed, or as text spelled as in CSV.
 */
import type { FieldKind } from './field-kinds.js';
import { JsonTextError, parseJsonText, showPath } from './json-value.js';

export type Coerced =
  | { kind: 'value'; value: unknown }
  /** Nothing given: the caller leaves the field as is, or clears it. */
  | { kind: 'empty' }
  | { kind: 'invalid'; reason: string };

const EMPTY: Coerced = { kind: 'empty' };
const TRUE_WORDS = new Set(['true', 'yes', '1']);
const FALSE_WORDS = new Set(['false', 'no', '0']);
const INTEGER_TEXT = /^[-+]?\d+$/;
const DIGITS = /^\d+$/;

function value(coerced: unknown): Coerced {
  return { kind: 'value', value: coerced };
}

function invalid(reason: string): Coerced {
  return { kind: 'invalid', reason };
}

/** A value as it appears in a message: quoted text, JSON for the rest, shortened. */
export function showValue(input: unknown): string {
  const text = JSON.stringify(input) ?? String(input);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function integerFromText(text: string): number | undefined {
  const trimmed = text.trim();
  if (!INTEGER_TEXT.test(trimmed)) return undefined;
  const parsed = Number(trimmed);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

/** An id (digits only) becomes a number; anything else is a name the planner resolves. */
function referenceFromText(text: string): number | string | undefined {
  const trimmed = text.trim();
  if (!DIGITS.test(trimmed)) return trimmed;
  const parsed = Number(trimmed);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

function splitList(text: string, separator: string): string[] {
  const items: string[] = [];
  for (const item of text.split(separator)) {
    const trimmed = item.trim();
    if (trimmed !== '') items.push(trimmed);
  }
  return items;
}

function isPlainObject(input: unknown): input is Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input);
}

/** Coerces a CSV cell (or a JSON string given for a non-string field). */
export function coerceText(kind: FieldKind, text: string, listSeparator: string): Coerced {
  if (kind === 'string' || kind === 'nullableString') return text === '' ? EMPTY : value(text);
  if (text.trim() === '') return EMPTY;
  switch (kind) {
    case 'boolean': {
      const word = text.trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return value(true);
      if (FALSE_WORDS.has(word)) return value(false);
      return invalid(`${showValue(text)} is not a boolean (use true/false, yes/no or 1/0)`);
    }
    case 'integer': {
      const parsed = integerFromText(text);
      return parsed === undefined ? invalid(`${showValue(text)} is not an integer`) : value(parsed);
    }
    case 'reference': {
      const parsed = referenceFromText(text);
      return parsed === undefined
        ? invalid(`${showValue(text)} is too large for an id`)
        : value(parsed);
    }
    case 'stringList':
      return value(splitList(text, listSeparator));
    case 'integerList':
    case 'referenceList':
      return listFromItems(kind, splitList(text, listSeparator), listSeparator);
    case 'object':
      return objectFromText(text);
  }
}

/** A JSON object given as text (a CSV cell), read as strictly as a JSON upload's records. */
function objectFromText(text: string): Coerced {
  let parsed;
  try {
    parsed = parseJsonText(text);
  } catch (error) {
    if (!(error instanceof JsonTextError)) throw error;
    return invalid(`${showValue(text)} is not a JSON object (${error.message})`);
  }
  const [problem] = parsed.problems;
  if (problem !== undefined) {
    return invalid(`${showValue(text)}: at "${showPath(problem.path)}", ${problem.message}`);
  }
  return isPlainObject(parsed.value)
    ? value(parsed.value)
    : invalid(`${showValue(text)} is not a JSON object`);
}

function listFromItems(kind: FieldKind, items: readonly unknown[], listSeparator: string): Coerced {
  const itemKind: FieldKind =
    kind === 'integerList' ? 'integer' : kind === 'referenceList' ? 'reference' : 'string';
  const result: unknown[] = [];
  for (const item of items) {
    const coerced = coerceJson(itemKind, item, listSeparator);
    if (coerced.kind === 'invalid') return invalid(`list item ${coerced.reason}`);
    if (coerced.kind === 'value') result.push(coerced.value);
  }
  return value(result);
}

/**
 * Coerces a JSON value. `null` is empty, except for a nullable string where it is a value; an
 * empty JSON string is a value for string fields (JSON can say "" apart from absent).
 */
export function coerceJson(kind: FieldKind, input: unknown, listSeparator: string): Coerced {
  if (input === null) return kind === 'nullableString' ? value(null) : EMPTY;
  if (input === undefined) return EMPTY;
  if (typeof input === 'string') {
    if (kind === 'string' || kind === 'nullableString') return value(input);
    return coerceText(kind, input, listSeparator);
  }
  switch (kind) {
    case 'string':
    case 'nullableString':
      return invalid(`${showValue(input)} is not a string`);
    case 'boolean':
      if (typeof input === 'boolean') return value(input);
      if (input === 1 || input === 0) return value(input === 1);
      return invalid(`${showValue(input)} is not a boolean (use true/false, yes/no or 1/0)`);
    case 'integer':
    case 'reference':
      return Number.isSafeInteger(input)
        ? value(input)
        : invalid(`${showValue(input)} is not an integer`);
    case 'stringList':
    case 'integerList':
    case 'referenceList':
      return Array.isArray(input)
        ? listFromItems(kind, input, listSeparator)
        : invalid(`${showValue(input)} is not a list`);
    case 'object':
      return isPlainObject(input)
        ? value(input)
        : invalid(`${showValue(input)} is not a JSON object`);
  }
}
