/**
 * The name a mistyped option most likely meant, for the command line and the HTTP API alike. A
 * guess is offered only when taking it is harmless: options that delete, lock, overwrite or lift
 * a guard are never offered (a mistyped `mapping` must not lead to `missing`).
 */

/** Options (in camel case, as the API names them) never offered as a guess for another. */
export const NEVER_SUGGESTED_OPTIONS: ReadonlySet<string> = new Set([
  'missing',
  'maxDeletes',
  'force',
  'allowAdmin',
  'allowLookalike',
  'emptyAsClear',
  'evenUnchanged',
  'evenChanged',
  // a broken upload sends nothing, unless streamed
  'stream',
]);

/** Edits (commander's rule) past which two names are not taken for each other. */
const MAX_DISTANCE = 3;

/** Optimal string alignment distance: insertions, deletions, substitutions, transpositions. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > MAX_DISTANCE) return Math.max(a.length, b.length);
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let j = 1; j <= b.length; j++) {
    for (let i = 1; i <= a.length; i++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/** Case, dashes and underscores aside: `dry-run`, `dryrun` and `DRY_RUN` all read `dryrun`. */
function folded(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}

/**
 * The one candidate closest to `given` (at most three edits, once case, dashes and underscores
 * are set aside, and more alike than not), or undefined when none is close, two are equally
 * close, or the closest is never suggested.
 */
export function nearestName(given: string, candidates: readonly string[]): string | undefined {
  const word = folded(given);
  let best: string[] = [];
  let bestDistance = MAX_DISTANCE + 1;
  for (const candidate of new Set(candidates)) {
    if (candidate.length <= 1) continue;
    const other = folded(candidate);
    const distance = editDistance(word, other);
    const length = Math.max(word.length, other.length);
    if ((length - distance) / length <= 0.4) continue;
    if (distance < bestDistance) {
      bestDistance = distance;
      best = [candidate];
    } else if (distance === bestDistance) {
      best.push(candidate);
    }
  }
  if (best.length !== 1) return undefined;
  return NEVER_SUGGESTED_OPTIONS.has(best[0]!) ? undefined : best[0];
}
