/**
 * A command that receives an upload holds two chunks of it at most, but V8 lets its old
 * generation grow to about four times what survived the last full collection before it
 * collects again: the producer of 1,000,000 rows peaked near 170 MiB resident against 115 MiB
 * for 100,000. Growing by half of what survived keeps it near 120 MiB at both sizes, for no CPU
 * that could be told apart from the noise (docs/configuration.md#memory). A growth set by
 * NODE_OPTIONS or on the command line is kept.
 */
import { setFlagsFromString } from 'node:v8';

const GROWTH = '--heap-growing-percent';

export function keepHeapLean(): void {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((flag) =>
    flag.includes(GROWTH.slice(2)),
  );
  if (!given) setFlagsFromString(`${GROWTH}=50`);
}
