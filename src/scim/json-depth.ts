/**
 * How deeply a JSON text nests, counted before it is parsed: a SCIM document is a few levels
 * deep (a Bulk operation's data, an extension, a complex attribute), and a body of 100,000
 * nested brackets would exhaust the stack of whatever walks it later. One pass, no recursion.
 */

/** Deepest nesting of objects and arrays a SCIM body may have. */
export const MAX_SCIM_DEPTH = 32;

/** Whether `text` nests objects and arrays deeper than `max` (brackets in strings do not count). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (inString) {
      if (code === 0x5c /* \ */) at++;
      else if (code === 0x22 /* " */) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x5b /* [ */ || code === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (code === 0x5d /* ] */ || code === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}
