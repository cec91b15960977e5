/**
 * The groups of a GET answer for their ids and names only, without the cost of their members: a
 * group's `users` list (a million ids across the groups of a large server, read twice by every
 * export) is checked to be plain ids by its bytes and left out of the parse, the rest of the
 * group parsed and checked as every answer's records are. A list that is not plain ids, or a
 * group whose `users` key cannot be found safely, is parsed whole.
 */
import type { AnswerDecoder } from '../admin/answer-decoder.js';
import { checkReadRecords } from '../admin/answers.js';
import { parseElement } from '../admin/json-array-splitter.js';
import { JsonArrayWalker } from '../admin/json-array-walker.js';
import {
  CLOSE_BRACKET,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  isWhitespace,
} from '../util/json-bytes.js';

const USERS_KEY = Buffer.from('"users":');
const EMPTY_LIST = Buffer.from('[]');
/** Digits of an id a double holds exactly. */
const MAX_DIGITS = 15;

class GroupNamesWalker extends JsonArrayWalker {
  groups: Record<string, unknown>[] = [];

  write(chunk: Buffer): void {
    this.walk(chunk);
  }

  protected element(buf: Buffer, start: number, whole: boolean): number {
    const end = whole ? buf.length : this.endOrCarry(buf, start);
    if (end === -1) return -1;
    const bytes = buf.subarray(start, end);
    const value = parseElement(withoutMembers(bytes) ?? bytes);
    this.groups.push(value as Record<string, unknown>);
    return end;
  }
}

/**
 * The group's bytes with its `users` list emptied, when the key stands where only a key can (at
 * the object's first level: after `{`, `,` or a blank, never after an escape) and the list is
 * plain ids; undefined otherwise.
 */
function withoutMembers(bytes: Buffer): Buffer | undefined {
  if (bytes[0] !== OPEN_BRACE) return undefined;
  const key = bytes.indexOf(USERS_KEY);
  if (key <= 0 || bytes.indexOf(USERS_KEY, key + 1) !== -1) return undefined;
  const before = bytes[key - 1]!;
  if (before !== OPEN_BRACE && before !== COMMA && !isWhitespace(before)) return undefined;
  let pos = key + USERS_KEY.length;
  while (pos < bytes.length && isWhitespace(bytes[pos]!)) pos++;
  if (bytes[pos] !== OPEN_BRACKET) return undefined;
  const open = pos;
  // 0: an id or the end may come; 1: an id must come; 2: in an id; 3: after an id and blanks
  let state = 0;
  let digits = 0;
  for (pos = open + 1; pos < bytes.length; pos++) {
    const byte = bytes[pos]!;
    if (byte >= 0x30 && byte <= 0x39) {
      if (state === 3) return undefined;
      // JSON has no leading zero
      if (state === 2 && digits === 1 && bytes[pos - 1] === 0x30) return undefined;
      digits = state === 2 ? digits + 1 : 1;
      if (digits > MAX_DIGITS) return undefined;
      state = 2;
    } else if (byte === COMMA) {
      if (state < 2) return undefined;
      state = 1;
    } else if (byte === CLOSE_BRACKET) {
      if (state === 1) return undefined;
      return Buffer.concat([bytes.subarray(0, open), EMPTY_LIST, bytes.subarray(pos + 1)]);
    } else if (isWhitespace(byte)) {
      if (state === 2) state = 3;
    } else return undefined;
  }
  return undefined;
}

/** The answer's groups, each checked, with `users` empty. */
export function groupNamesDecoder(info: {
  method: string;
  path: string;
}): AnswerDecoder<Record<string, unknown>[]> {
  const walker = new GroupNamesWalker();
  return {
    get kind() {
      return walker.kind;
    },
    write(chunk) {
      walker.write(chunk);
      const groups = walker.groups;
      walker.groups = [];
      if (groups.length === 0) return { records: 0 };
      const { checked, fault } = checkReadRecords('groups', groups, info);
      return { value: groups.slice(0, checked), records: checked, fault };
    },
    end: () => walker.end(),
  };
}
