/**
 * Keeps ingest from holding the event loop: parsing runs in slices, and after a slice of
 * `sliceMs` the pacer gives the loop a turn (`setImmediate`), so timers, sockets and a health
 * check in the same process are served while a big upload is read. Promises that resolve at
 * once (an in-memory upload, a buffered stream) never give the loop a turn by themselves.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Longest stretch of synchronous ingest work before the event loop gets a turn. */
export const DEFAULT_SLICE_MS = 5;

/** Records between two looks at the clock: a look costs more than a record. */
const CALLS_PER_CLOCK_LOOK = 64;

/** Ask after each piece of work whether the slice is used up; if so, `await pause()`. */
export class Pacer {
  private sliceStart = performance.now();
  private records = 0;

  constructor(private readonly sliceMs = DEFAULT_SLICE_MS) {}

  /** After a chunk of bytes was parsed: whether the slice is used up. */
  chunkDone(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  /** After one record was handed on: as `chunkDone`, looking at the clock less often. */
  recordDone(): boolean {
    if (++this.records < CALLS_PER_CLOCK_LOOK) return false;
    this.records = 0;
    return this.chunkDone();
  }

  /** Gives the event loop a turn and starts a new slice. */
  async pause(): Promise<void> {
    await nextTurn();
    this.sliceStart = performance.now();
  }
}
