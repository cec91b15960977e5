/**
 * Follows a job (an import, an export) until it ends: a live line on a terminal, plain lines
 * otherwise, and a hint when nothing moves for a while (e.g. no worker runs).
 */
export interface FollowDisplay {
  out?: NodeJS.WriteStream;
  /** Milliseconds between reads. @defaultValue 250 */
  intervalMs?: number;
  /** Milliseconds between plain lines when not on a terminal. @defaultValue 2000 */
  lineIntervalMs?: number;
  /** Said once when nothing moves for a while, e.g. that no worker runs. */
  stuckHint?: () => Promise<string | undefined>;
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
  for (;;) {
    const info = await options.read();
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
      return info;
    }
    if (!hinted && options.stuckHint && Date.now() - lastMove > 3_000) {
      hinted = true;
      const hint = await options.stuckHint();
      if (hint) out.write(`${tty ? '\n' : ''}${hint}\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}
