/**
 * Items that arrive within a short window leave together: the first item of a window waits up to
 * `windowMs` for others, a full batch (`maxBatch`) leaves at once, and at most `inFlight` batches
 * are out at a time. While they are, the next batch keeps gathering and leaves when one of them
 * is answered (a group commit): the busier the receiver, the fuller the batches.
 *
 * `open` is called when a window opens (its first item arrives, or items are left waiting after
 * a batch left) and what it returns goes with that window's batch to `send`: a read the window
 * can start early, so that it overlaps the wait. `send` settles every item of its batch and never
 * throws.
 */
export interface WindowOptions {
  /** How long the first item of a window waits for others, in ms. */
  windowMs: number;
  /** The most items in one batch; a full window leaves at once. */
  maxBatch: number;
  /** Batches out at once; more wait, gathering what arrives. */
  inFlight: number;
}

export class WindowBatcher<T, W = undefined> {
  private waiting: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** What the open window's opening started. */
  private opened: { value: W } | undefined;
  private sending = 0;
  /** The window closed (or filled) while every batch allowed was out. */
  private due = false;

  constructor(
    private readonly options: WindowOptions,
    private readonly send: (batch: T[], opened: W) => Promise<void>,
    private readonly open: () => W = () => undefined as W,
  ) {}

  /** Adds an item to the open window (opening one when none is). */
  add(item: T): void {
    this.waiting.push(item);
    if (this.waiting.length === 1) {
      this.opened = { value: this.open() };
      this.timer = setTimeout(() => this.flush(), this.options.windowMs);
    }
    if (this.waiting.length >= this.options.maxBatch) this.flush();
  }

  /** Sends the waiting items now, or as soon as a batch being sent is answered. */
  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiting.length === 0) return;
    if (this.sending >= this.options.inFlight) {
      this.due = true;
      return;
    }
    const batch = this.waiting.splice(0, this.options.maxBatch);
    const opened = this.opened!;
    this.opened = undefined;
    this.due = false;
    this.sending += 1;
    void this.send(batch, opened.value).finally(() => {
      this.sending -= 1;
      this.next();
    });
    this.next();
  }

  /** What is left waiting after a batch left or was answered: sent now, or its window opened. */
  private next(): void {
    if (this.waiting.length === 0) return;
    this.opened ??= { value: this.open() };
    if (this.due || this.waiting.length >= this.options.maxBatch) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.windowMs);
  }
}
