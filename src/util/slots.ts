/**
 * A fixed number of slots, taken in the order asked for. Taking one can be given up through an
 * abort signal while it waits; the slot is then never handed to it.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`slots: size ${size}`);
    this.free = size;
  }

  /** Waits for a slot; resolves with the function that gives it back (once, whatever is called). */
  async take(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.free > 0) {
      this.free--;
      return this.giver();
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiting.indexOf(grant);
        if (index !== -1) this.waiting.splice(index, 1);
        reject(signal!.reason);
      };
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return this.giver();
  }

  private giver(): () => void {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}
