/**
 * SCIM filters (RFC 7644 §3.4.2.2): parsed once into a tree, then evaluated over resources in
 * canonical form. Operators eq, ne, co, sw, ew, gt, ge, lt, le, pr; `and`, `or`, `not (…)`,
 * parentheses and value paths (`emails[type eq "work" and value co "@x.org"]`). Attribute names
 * and operators are matched without regard to case; strings are compared without regard to case
 * unless the attribute is caseExact (id, externalId, members' value). A bare word where a value
 * belongs (`name.familyName eq Employee`) is taken as that text, as clients send it.
 */
import { scimInvalid } from './scim-error.js';
import {
  leafAttribute,
  resolvePath,
  valuesAt,
  isObject,
  type AttributePath,
  type Json,
  type JsonObject,
} from './attribute-path.js';
import type { Attribute, ResourceKind } from './resource-schemas.js';

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
const COMPARE_OPS: ReadonlySet<string> = new Set([
  'eq',
  'ne',
  'co',
  'sw',
  'ew',
  'gt',
  'ge',
  'lt',
  'le',
]);

export type Filter =
  | { kind: 'compare'; path: AttributePath; op: CompareOp; value: Json }
  | { kind: 'present'; path: AttributePath }
  | { kind: 'and' | 'or'; left: Filter; right: Filter }
  | { kind: 'not'; filter: Filter }
  | { kind: 'valuePath'; path: AttributePath; filter: Filter };

type Token =
  | { type: 'word'; text: string; at: number }
  | { type: 'string'; text: string; at: number }
  | { type: '(' | ')' | '[' | ']'; at: number };

/** Longest filter read. */
export const MAX_FILTER_CHARS = 4096;
/**
 * Most comparisons (and `pr` tests) one filter may hold: each is evaluated over every resource
 * of the target, so 130 `co` terms over 50,000 users held the API's thread for five seconds.
 * Identity providers send one or two.
 */
export const MAX_FILTER_TERMS = 32;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < source.length) {
    const char = source[index]!;
    if (/\s/.test(char)) {
      index++;
    } else if ('()[]'.includes(char)) {
      tokens.push({ type: char as '(' | ')' | '[' | ']', at: index });
      index++;
    } else if (char === '"') {
      let end = index + 1;
      while (end < source.length && source[end] !== '"') end += source[end] === '\\' ? 2 : 1;
      if (end >= source.length) throw bad(`a string opened at position ${index} is not closed`);
      const literal = source.slice(index, end + 1);
      let text: string;
      try {
        text = JSON.parse(literal) as string;
      } catch {
        throw bad(`the string at position ${index} has an invalid escape`);
      }
      tokens.push({ type: 'string', text, at: index });
      index = end + 1;
    } else {
      let end = index;
      while (end < source.length && !/[\s()[\]"]/.test(source[end]!)) end++;
      tokens.push({ type: 'word', text: source.slice(index, end), at: index });
      index = end;
    }
  }
  return tokens;
}

function bad(problem: string): Error {
  return scimInvalid('invalidFilter', `filter: ${problem}`);
}

class Parser {
  private position = 0;
  private terms = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly kind: ResourceKind,
  ) {}

  parse(within?: Attribute): Filter {
    const filter = this.or(within);
    const extra = this.tokens[this.position];
    if (extra) throw bad(`unexpected ${describe(extra)} at position ${extra.at}`);
    return filter;
  }

  private peekWord(): string | undefined {
    const token = this.tokens[this.position];
    return token?.type === 'word' ? token.text.toLowerCase() : undefined;
  }

  private or(within?: Attribute): Filter {
    let left = this.and(within);
    while (this.peekWord() === 'or') {
      this.position++;
      left = { kind: 'or', left, right: this.and(within) };
    }
    return left;
  }

  private and(within?: Attribute): Filter {
    let left = this.atom(within);
    while (this.peekWord() === 'and') {
      this.position++;
      left = { kind: 'and', left, right: this.atom(within) };
    }
    return left;
  }

  private expect(type: '(' | ')' | ']'): void {
    const token = this.tokens[this.position];
    if (token?.type !== type) {
      throw bad(`expected "${type}" ${token ? `at position ${token.at}` : 'at the end'}`);
    }
    this.position++;
  }

  private atom(within?: Attribute): Filter {
    const token = this.tokens[this.position];
    if (!token) throw bad('it ends where an expression belongs');
    if (token.type === '(') {
      this.position++;
      const inner = this.or(within);
      this.expect(')');
      return inner;
    }
    if (
      token.type === 'word' &&
      token.text.toLowerCase() === 'not' &&
      this.tokens[this.position + 1]?.type === '('
    ) {
      this.position += 2;
      const inner = this.or(within);
      this.expect(')');
      return { kind: 'not', filter: inner };
    }
    if (token.type !== 'word') throw bad(`expected an attribute at position ${token.at}`);
    if (++this.terms > MAX_FILTER_TERMS) {
      throw bad(`more than ${MAX_FILTER_TERMS} comparisons; ask for fewer at a time`);
    }
    this.position++;
    const path = resolvePath(this.kind, token.text, within);
    // a filter on a password would tell it, one character at a time
    if (leafAttribute(path)?.returned === 'never') {
      throw bad(`"${token.text}" is never returned, so it cannot be filtered on`);
    }
    if (this.tokens[this.position]?.type === '[') {
      if (within) throw bad(`a value filter cannot hold another, at position ${token.at}`);
      this.position++;
      const inner = this.or(path.attribute ?? { name: path.name, type: 'complex' });
      this.expect(']');
      return { kind: 'valuePath', path, filter: inner };
    }
    const opToken = this.tokens[this.position];
    const op = opToken?.type === 'word' ? opToken.text.toLowerCase() : undefined;
    if (op === 'pr') {
      this.position++;
      return { kind: 'present', path };
    }
    if (op === undefined || !COMPARE_OPS.has(op)) {
      throw bad(
        `expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le, pr) after "${token.text}"${opToken ? ` at position ${opToken.at}` : ''}`,
      );
    }
    this.position++;
    const valueToken = this.tokens[this.position];
    if (!valueToken || (valueToken.type !== 'word' && valueToken.type !== 'string')) {
      throw bad(`expected a value after "${token.text} ${op}"`);
    }
    this.position++;
    const value = valueToken.type === 'string' ? valueToken.text : literal(valueToken.text);
    return { kind: 'compare', path, op: op as CompareOp, value };
  }
}

function describe(token: Token): string {
  return token.type === 'word' || token.type === 'string' ? `"${token.text}"` : `"${token.type}"`;
}

/** true, false, null, a number, else the word itself. */
function literal(word: string): Json {
  const lower = word.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  if (lower === 'null') return null;
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(word)) return Number(word);
  return word;
}

/** Parses a filter of the resource type; PORTER_SCIM_INVALID (invalidFilter) when it is not one. */
export function parseFilter(source: string, kind: ResourceKind, within?: Attribute): Filter {
  if (source.length > MAX_FILTER_CHARS) throw bad(`longer than ${MAX_FILTER_CHARS} characters`);
  const tokens = tokenize(source);
  if (tokens.length === 0) throw bad('it is empty');
  // `within`: a value filter on its own (a PATCH path's brackets), paths inside the attribute
  return new Parser(tokens, kind).parse(within);
}

/** Whether the resource (or a multi-valued attribute's element) matches the filter. */
export function matches(filter: Filter, resource: JsonObject): boolean {
  switch (filter.kind) {
    case 'and':
      return matches(filter.left, resource) && matches(filter.right, resource);
    case 'or':
      return matches(filter.left, resource) || matches(filter.right, resource);
    case 'not':
      return !matches(filter.filter, resource);
    case 'present':
      return valuesAt(resource, filter.path).some(present);
    case 'valuePath': {
      const holder = filter.path.extension ? resource[filter.path.extension] : resource;
      const value = isObject(holder) ? holder[filter.path.name] : undefined;
      const items = Array.isArray(value)
        ? value
        : value === undefined || value === null
          ? []
          : [value];
      return items.some((item) => isObject(item) && matches(filter.filter, item));
    }
    case 'compare': {
      const values = valuesAt(resource, filter.path);
      const attribute = leafAttribute(filter.path);
      if (filter.op === 'ne')
        return !values.some((value) => compare(value, 'eq', filter.value, attribute));
      return values.some((value) => compare(value, filter.op, filter.value, attribute));
    }
  }
}

function present(value: Json): boolean {
  if (value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return true;
}

function asBoolean(value: Json): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value))
    return value.toLowerCase() === 'true';
  return undefined;
}

function compare(actual: Json, op: CompareOp, expected: Json, attribute?: Attribute): boolean {
  if (attribute?.type === 'boolean' || typeof actual === 'boolean') {
    const [a, b] = [asBoolean(actual), asBoolean(expected)];
    return op === 'eq' && a !== undefined && a === b;
  }
  if (expected === null) return op === 'eq' && actual === null;
  if (typeof actual === 'number' && typeof expected === 'number')
    return order(actual - expected, op);
  if (typeof actual !== 'string' && typeof actual !== 'number') return false;
  if (attribute?.type === 'dateTime') {
    const [a, b] = [Date.parse(String(actual)), Date.parse(String(expected))];
    if (Number.isNaN(a) || Number.isNaN(b)) return false;
    return order(a - b, op);
  }
  const exact = attribute?.caseExact === true;
  const a = exact ? String(actual) : String(actual).toLowerCase();
  const b = exact ? String(expected) : String(expected).toLowerCase();
  switch (op) {
    case 'co':
      return a.includes(b);
    case 'sw':
      return a.startsWith(b);
    case 'ew':
      return a.endsWith(b);
    default:
      return order(a < b ? -1 : a > b ? 1 : 0, op);
  }
}

function order(difference: number, op: CompareOp): boolean {
  switch (op) {
    case 'eq':
      return difference === 0;
    case 'gt':
      return difference > 0;
    case 'ge':
      return difference >= 0;
    case 'lt':
      return difference < 0;
    case 'le':
      return difference <= 0;
    default:
      return false;
  }
}

/**
 * The value an `eq` filter on this attribute asks for, when the filter is only that (or a
 * conjunction holding it): lets a read ask the DAM for one record instead of listing all.
 */
export function equalityOn(filter: Filter, name: string, extension?: string): string | undefined {
  if (filter.kind === 'compare' && filter.op === 'eq' && filter.path.sub === undefined) {
    const same = filter.path.name === name && filter.path.extension === extension;
    return same && typeof filter.value === 'string' ? filter.value : undefined;
  }
  if (filter.kind === 'and') {
    return equalityOn(filter.left, name, extension) ?? equalityOn(filter.right, name, extension);
  }
  return undefined;
}
