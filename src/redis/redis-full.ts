/**
 * A full Redis (`maxmemory` reached under `noeviction`) refuses writes with `OOM command not
 * allowed`: a transient state, not a fault of the work that met it. A process says so once, and
 * once when Redis has room again; the work waits for room instead of spending its tries.
 */
import type { Logger } from '../util/logger.js';

/** Whether Redis refused a write because it is full (maxmemory reached). */
export function isOutOfMemory(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (/\bOOM command not allowed\b/.test(error.message)) return true;
  const last = (error as { lastNodeError?: unknown }).lastNodeError;
  return last !== undefined && last !== error && isOutOfMemory(last);
}

export interface RoomWatch {
  /** Redis refused a write for want of memory: logged once until it has room again. */
  refused(error: unknown): void;
  /** A write went through: if Redis was full, it has room again (logged once). */
  room(): void;
  /** Whether the last word was that Redis is full. */
  readonly full: boolean;
}

export function watchRoom(logger: Logger, where: string): RoomWatch {
  let full = false;
  let since = 0;
  return {
    refused(error) {
      if (full) return;
      full = true;
      since = Date.now();
      logger.warn(
        { reason: (error as Error | undefined)?.message?.split('\n')[0]?.slice(0, 200) },
        `Redis is full (${where}): it refuses writes; work waits for room (free memory or raise maxmemory)`,
      );
    },
    room() {
      if (!full) return;
      full = false;
      logger.warn({ fullMs: Date.now() - since }, `Redis has room again (${where})`);
    },
    get full() {
      return full;
    },
  };
}

export interface WaitForRoomOptions {
  room: RoomWatch;
  /** A write Redis refuses while it is full; resolves once it has room. */
  probe: () => Promise<unknown>;
  /** Ends the wait (shutdown, lost lock): rejects with the signal's reason. */
  signal?: AbortSignal;
  /** First pause between probes, doubled up to `maxDelayMs`. @defaultValue 100 */
  firstDelayMs?: number;
  /** @defaultValue 2000 */
  maxDelayMs?: number;
}

/** Waits until the probe's write goes through; any error but a full Redis is thrown. */
export async function waitForRoom(options: WaitForRoomOptions): Promise<void> {
  let delay = options.firstDelayMs ?? 100;
  const max = options.maxDelayMs ?? 2_000;
  for (;;) {
    await pause(delay, options.signal);
    try {
      await options.probe();
      options.room.room();
      return;
    } catch (error) {
      if (!isOutOfMemory(error)) throw error;
    }
    delay = Math.min(max, delay * 2);
  }
}

/**
 * Runs the work; when Redis refuses one of its writes for want of memory, waits for room and runs
 * it again (the work must be safe to run again), as often as it takes.
 */
export async function untilRoom<T>(
  work: () => Promise<T>,
  options: Omit<WaitForRoomOptions, 'room'> & { room?: RoomWatch },
): Promise<T> {
  for (;;) {
    try {
      const done = await work();
      // its writes went through (a batch taken over after a wait, for one): Redis has room
      options.room?.room();
      return done;
    } catch (error) {
      if (!isOutOfMemory(error) || !options.room || options.signal?.aborted) throw error;
      options.room.refused(error);
      await waitForRoom({ ...options, room: options.room });
    }
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const done = (): void => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = (): void => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
