/**
 * Import events on `${prefix}:import-events`: the store publishes `{ id, state, settled }` when
 * an import becomes final and again when it settles (every record has its result). A finished
 * import that needed no more results sends one message with settled true.
 */
import type { Redis } from 'ioredis';
import { FINAL_IMPORT_STATES, type ImportState } from '../model/import.js';
import { importEventsChannel } from './import-keys.js';
import type { ImportProgress } from './import-reader.js';
import type { ImportStore } from './import-store.js';

export interface ImportEvent {
  id: string;
  state: ImportState;
  /** Every record has its result: the report is complete. */
  settled: boolean;
}

/** The event in a channel message, or undefined when the message is not one. */
export function parseImportEvent(message: string): ImportEvent | undefined {
  try {
    const value = JSON.parse(message) as Partial<ImportEvent>;
    if (typeof value.id !== 'string' || typeof value.state !== 'string') return undefined;
    return { id: value.id, state: value.state, settled: value.settled === true };
  } catch {
    return undefined;
  }
}

export interface WaitForImportOptions {
  /** `settled` (default) waits for the complete report; `final` only for a final state. */
  until?: 'final' | 'settled';
  /** Give up after this long with an error. Default: wait without limit. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

function reached(progress: ImportProgress, until: 'final' | 'settled'): boolean {
  return until === 'settled' ? progress.settled : FINAL_IMPORT_STATES.has(progress.state);
}

/**
 * Waits until the import is final or settled and returns its progress then. `subscriber` is a
 * connection this call may put in subscriber mode (e.g. `redis.duplicate()`); it subscribes
 * before reading the state, so an event between the two cannot be missed.
 */
export async function waitForImport(
  store: ImportStore,
  subscriber: Redis,
  importId: string,
  options: WaitForImportOptions = {},
): Promise<ImportProgress> {
  const until = options.until ?? 'settled';
  const channel = importEventsChannel(store.prefix);
  let onMessage: ((from: string, message: string) => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const event = new Promise<void>((resolve, reject) => {
      onMessage = (from, message) => {
        const parsed = from === channel ? parseImportEvent(message) : undefined;
        if (!parsed || parsed.id !== importId) return;
        if (until === 'final' || parsed.settled) resolve();
      };
      subscriber.on('message', onMessage);
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(
          () => reject(new Error(`import ${importId} not ${until} after ${options.timeoutMs} ms`)),
          options.timeoutMs,
        );
      }
      onAbort = () => reject(options.signal?.reason ?? new Error('aborted'));
      if (options.signal?.aborted) onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
    event.catch(() => {});
    await subscriber.subscribe(channel);
    const now = await store.progress(importId);
    if (reached(now, until)) return now;
    await event;
    return await store.progress(importId);
  } finally {
    if (onMessage) subscriber.off('message', onMessage);
    if (timer) clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener('abort', onAbort);
    await subscriber.unsubscribe(channel).catch(() => {});
  }
}
