/**
 * Follows a job (an import, an export) until it ends: a live line on a terminal, plain lines
 * otherwise, and a hint when nothing moves for a while (e.g. no worker runs). While Redis is
 * away it says "waiting for Redis" once, and goes on following when Redis is back.
 */
import { isConnectionError } from '../redis/outage-log.js';

/** Whether Redis is away now, and news of when that changes (the context's RedisWatch). */
export interface RedisPresence {
  readonly down: boolean;
  onChange(listener: (down: boolean) => void): () => void;
}

export interface FollowDisplay {
  out?: NodeJS.WriteStream;
  /** Milliseconds between reads. @defaultValue 250 */
  intervalMs?: number;
  /** Milliseconds between plain lines when not on a terminal. @defaultValue 2000 */
  lineIntervalMs?: number;
  /** Said once when nothing moves for a while, e.g. that no worker runs. */
  stuckHint?: () => Promise<string | undefined>;
  /** Where Redis stands: said as soon as it goes away, rather than when a read gives up. */
  redis?: RedisPresence;
}

export interface FollowOptions<T> extends FollowDisplay {
  /** What is followed, for the message when it disappears. */
  what: string;
  read: () => Promise<T | undefined>;
  isFinal: (info: T) => boolean;
  /** Changes whenever the job moves on. */
  mark: (info: T) => unknown;
  describe: (info: T) => string;
}

/** Reads until the job is final, showing each state; returns the final one. */
export async function follow<T>(options: FollowOptions<T>): Promise<T> {
  const out = options.out ?? process.stderr;
  const tty = out.isTTY === true;
  let lastLine = 0;
  let lastMark: unknown = Symbol('none');
  let lastMove = Date.now();
  let hinted = false;
  // one line when Redis goes away, one when it is back; a read that fails meanwhile is tried again
  let waiting = false;
  const away = (): void => {
    if (waiting) return;
    waiting = true;
    out.write(
      `${tty ? '\n' : ''}waiting for Redis: it went away; following again when it is back\n`,
    );
  };
  const back = (): void => {
    if (!waiting) return;
    waiting = false;
    // time without Redis is not time without progress
    lastMove = Date.now();
    out.write('Redis is back; following\n');
  };
  const unsubscribe = options.redis?.onChange((down) => (down ? away() : undefined));
  if (options.redis?.down) away();
  try {
    for (;;) {
      const info = await readOrWait(options.read, away);
      if (info === WAIT) {
        await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
        continue;
      }
      back();
      if (step(info) === DONE) return info!;
      if (!hinted && options.stuckHint && Date.now() - lastMove > 3_000) {
        hinted = true;
        const hint = await options.stuckHint().catch((error: unknown) => {
          if (isConnectionError(error)) return undefined;
          throw error;
        });
        if (hint) out.write(`${tty ? '\n' : ''}${hint}\n`);
      }
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
    }
  } finally {
    unsubscribe?.();
  }

  /** Shows one state; DONE when it is final. */
  function step(info: T | undefined): typeof DONE | undefined {
    if (info === undefined)
      throw new Error(`the ${options.what} disappeared while it was followed`);
    const final = options.isFinal(info);
    const mark = options.mark(info);
    if (mark !== lastMark) {
      lastMark = mark;
      lastMove = Date.now();
    }
    const line = options.describe(info);
    if (tty) {
      out.write(`\r${line}\x1b[K`);
    } else if (final || Date.now() - lastLine >= (options.lineIntervalMs ?? 2_000)) {
      out.write(`${line}\n`);
      lastLine = Date.now();
    }
    if (final) {
      if (tty) out.write('\n');
      return DONE;
    }
    return undefined;
  }
}

const WAIT = Symbol('wait for Redis');
const DONE = Symbol('done');

/** Reads; a read that failed because Redis is away says so and gives WAIT. */
async function readOrWait<T>(
  read: () => Promise<T | undefined>,
  away: () => void,
): Promise<T | undefined | typeof WAIT> {
  try {
    return await read();
  } catch (error) {
    if (!isConnectionError(error)) throw error;
    away();
    return WAIT;
  }
}
