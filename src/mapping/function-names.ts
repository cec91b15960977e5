/**
 * The functions an expression may call: JSONata's (jsonata 2.x, `$eval` taken away) and
 * porter's own. A call of any other name (`$uppercas`) is refused when the mapping is read,
 * with the nearest name when one is close, rather than failing every record.
 */
import { PORTER_FUNCTIONS } from './functions.js';

/** JSONata's functions (test/mapping/function-names.test.ts checks each against the package). */
export const JSONATA_FUNCTIONS: readonly string[] = [
  'sum',
  'count',
  'max',
  'min',
  'average',
  'string',
  'substring',
  'substringBefore',
  'substringAfter',
  'lowercase',
  'uppercase',
  'length',
  'trim',
  'pad',
  'match',
  'contains',
  'replace',
  'split',
  'join',
  'formatNumber',
  'formatBase',
  'formatInteger',
  'parseInteger',
  'number',
  'floor',
  'ceil',
  'round',
  'abs',
  'sqrt',
  'power',
  'random',
  'boolean',
  'not',
  'map',
  'zip',
  'filter',
  'single',
  'reduce',
  'sift',
  'keys',
  'lookup',
  'append',
  'exists',
  'spread',
  'merge',
  'reverse',
  'each',
  'error',
  'assert',
  'type',
  'sort',
  'shuffle',
  'distinct',
  'encodeUrlComponent',
  'encodeUrl',
  'decodeUrlComponent',
  'decodeUrl',
  'toMillis',
  'fromMillis',
  'clone',
  'now',
  'millis',
];

/** Every function an expression may call, by name (without `$`). */
export const KNOWN_FUNCTIONS: ReadonlySet<string> = new Set([
  ...JSONATA_FUNCTIONS,
  ...Object.keys(PORTER_FUNCTIONS),
]);

/** Edits (insert, delete, replace, swap of neighbours) from `a` to `b`, counted up to `limit`. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, before[j - 2]! + 1);
      }
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** The known function nearest to `name` (case aside, or within two edits), if any. */
export function nearestFunction(name: string): string | undefined {
  const lower = name.toLowerCase();
  let nearest: string | undefined;
  let best = 3;
  for (const known of KNOWN_FUNCTIONS) {
    const edits = known.toLowerCase() === lower ? 0 : distance(lower, known.toLowerCase(), 2);
    if (edits < best) {
      best = edits;
      nearest = known;
    }
  }
  return nearest;
}
