/**
 * What a username or group name may hold. These names are keys: the planner looks records up
 * by them and the admin server stores them as given, so a name that cannot be told apart from
 * another one, or that the server would store differently from how it is looked up, is refused
 * rather than repaired (a repaired key would silently name another record):
 *
 * - control and format characters: NUL, line breaks, zero-width characters (U+200B), bidi
 *   controls (U+200E, U+202E), the byte order mark (U+FEFF), and every other default-ignorable
 *   or non-character code point;
 * - lone surrogates (`"\uD800"` in JSON): not text, stored as one thing and read back as U+FFFD;
 * - whitespace at the start or the end.
 */

const LONE_SURROGATE = /\p{Cs}/u;
const INVISIBLE_OR_CONTROL =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}]/u;
const EDGE_WHITESPACE = /^\s|\s$/u;
/** Anything outside printable ASCII sends a key to the full checks. */
const NOT_PLAIN_ASCII = /[^\x21-\x7e]/;

function codePoint(character: string): string {
  const hex = (character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
  return `U+${hex}`;
}

/** Why `key` cannot be a username or group name, or undefined when it can. */
export function keyTextProblem(key: string): string | undefined {
  // the common case: printable ASCII, no space at all
  if (!NOT_PLAIN_ASCII.test(key)) return undefined;
  if (LONE_SURROGATE.test(key)) {
    return 'holds a lone surrogate (\\uD800-\\uDFFF alone is not a character); fix the text';
  }
  const invisible = INVISIBLE_OR_CONTROL.exec(key);
  if (invisible !== null) {
    return (
      `holds the control or invisible character ${codePoint(invisible[0])} at position ` +
      `${invisible.index + 1}; remove it`
    );
  }
  if (EDGE_WHITESPACE.test(key)) {
    return 'starts or ends with whitespace; remove it (names are not trimmed)';
  }
  return undefined;
}
