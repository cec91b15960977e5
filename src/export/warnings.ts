/** Warnings of one run: each distinct message once, at most a bounded number kept. */
const DEFAULT_LIMIT = 100;

/** The distinct warnings of one run, bounded. */
export class RunWarnings {
  private readonly seen = new Set<string>();
  private dropped = 0;

  constructor(private readonly limit = DEFAULT_LIMIT) {}

  /** Keeps the message, unless it was seen or the list is full. */
  add(message: string): void {
    if (this.seen.has(message)) return;
    if (this.seen.size >= this.limit) {
      this.dropped++;
      return;
    }
    this.seen.add(message);
  }

  /** The messages, and a last line counting those left out. */
  list(): string[] {
    const messages = [...this.seen];
    if (this.dropped > 0) messages.push(`... and ${this.dropped} more warnings`);
    return messages;
  }
}
