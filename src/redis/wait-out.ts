/**
 * Work that Redis cannot serve for a while (it is away, a Cluster slot is in migration, a
 * master fails over) waits and runs again, instead of spending one of its job's attempts: a
 * batch is safe to run again (rows with a result are skipped, rows in the send journal are
 * looked up before they are sent), and a slow reshard can keep a slot answering TRYAGAIN for
 * as long as its keys take to move. The wait ends only with the signal (the job's lock was
 * lost, the worker shuts down), and then the last Redis error is thrown.
 */
import { sleep } from '../execute/retry-policy.js';
import { isConnectionError } from './outage-log.js';

export interface WaitOutOptions {
  signal?: AbortSignal;
  /** Told once, with the first error, when the work starts waiting. */
  onWait?: (error: Error) => void;
  /** Told when the work ran through after waiting, with how many runs it took. */
  onServed?: (runs: number) => void;
  /** First pause between runs, doubled up to `maxDelayMs`. @defaultValue 250 */
  baseDelayMs?: number;
  /** @defaultValue 5000 */
  maxDelayMs?: number;
}

/** Runs `work` until it ends without an error that says Redis cannot serve now. */
export async function waitOutRedis<T>(
  work: () => Promise<T>,
  options: WaitOutOptions = {},
): Promise<T> {
  const base = options.baseDelayMs ?? 250;
  const max = options.maxDelayMs ?? 5_000;
  for (let run = 1; ; run++) {
    try {
      const result = await work();
      if (run > 1) options.onServed?.(run);
      return result;
    } catch (error) {
      if (!isConnectionError(error) || options.signal?.aborted) throw error;
      if (run === 1) options.onWait?.(error as Error);
      try {
        await sleep(Math.min(max, base * 2 ** Math.min(run - 1, 10)), options.signal);
      } catch {
        throw error;
      }
    }
  }
}
