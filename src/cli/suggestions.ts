/**
 * What the option parser may suggest for a mistyped flag. A guess is offered only when taking
 * it is harmless: flags that delete, lock, overwrite or lift a guard are never offered (a
 * mistyped `--mapping` must not lead to `--missing`). The list is the HTTP API's too
 * (src/util/nearest-name.ts).
 */
import { NEVER_SUGGESTED_OPTIONS } from '../util/nearest-name.js';

/** Flags never offered as a guess for another. */
export const NEVER_SUGGESTED: ReadonlySet<string> = new Set(
  [...NEVER_SUGGESTED_OPTIONS].map(
    (name) => `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`,
  ),
);

const GUESS = /\s*\(Did you mean (?:one of )?([^?]*)\?\)/;

/** The parser's message with its guesses limited to safe flags. */
export function safeSuggestion(message: string): string {
  const match = GUESS.exec(message);
  if (!match) return message;
  const guesses = match[1]!.split(/,\s*/).filter((flag) => !NEVER_SUGGESTED.has(flag));
  const base = message.replace(GUESS, '');
  if (guesses.length === 0) return base;
  const text = guesses.length === 1 ? guesses[0] : `one of ${guesses.join(', ')}`;
  return `${base.trimEnd()} (Did you mean ${text}?)`;
}
