/**
 * Keeps the methods of strings on V8's fast path. A class that extends String (ioredis defines
 * one, VerbatimString, when it loads) turns String.prototype into a dictionary-mode prototype:
 * every `text.indexOf(…)`, `slice`, `charCodeAt` of the process then finds its method through a
 * hash table, which costs an export a fifth of its speed. V8 turns a prototype back to fast
 * properties when an inline cache first loads a property through it; this makes such loads,
 * enough of them for the loop's inline caches to exist (V8 creates them after some work).
 * Called once Redis's client is loaded (createPorterContext); cheap, and harmless when the
 * prototype is already fast.
 */
export function keepStringMethodsFast(): void {
  const probe = Object.create(String.prototype) as { toString: unknown };
  let loaded: unknown;
  for (let round = 0; round < LOADS; round++) loaded = probe.toString;
  if (loaded === undefined) throw new Error('String.prototype.toString is missing');
}

/** Loads made: V8 gives a function its inline caches after a budget of work, well within this. */
const LOADS = 10_000;
