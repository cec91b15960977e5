/**
 * Injected misbehaviour, so porter's retries, splits and reconciliation can be rehearsed:
 * latency, refusals (503), dropped connections after applying, rate limits (429) and
 * record limits (413). Decisions come from an injectable `random`, so tests are deterministic.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { SandboxError } from './errors.js';
import { checkFaults, DEFAULT_FAULTS, type FaultOptions } from './options.js';
import type { SandboxStats } from './stats.js';

const WINDOW_MS = 1000;

/** The faults in force, and the decisions they make per request. */
export class Faults {
  private current: FaultOptions;
  /** Times of the requests admitted in the last second, oldest first (sliding window). */
  private admitted: number[] = [];

  private readonly random: () => number;
  private readonly now: () => number;
  private readonly sleep: (ms: number, method: string) => Promise<void>;

  constructor(
    options: Partial<FaultOptions>,
    private readonly stats: SandboxStats,
    sources: {
      random?: () => number;
      now?: () => number;
      sleep?: (ms: number, method: string) => Promise<void>;
    } = {},
  ) {
    this.current = { ...DEFAULT_FAULTS, ...checkFaults(options) };
    this.random = sources.random ?? Math.random;
    this.now = sources.now ?? Date.now;
    this.sleep = sources.sleep ?? ((ms) => delay(ms));
  }

  get options(): Readonly<FaultOptions> {
    return this.current;
  }

  /** Changes faults at run time; unnamed ones keep their value. */
  update(options: Partial<FaultOptions>): void {
    this.current = { ...this.current, ...checkFaults(options) };
    this.admitted = [];
  }

  /**
   * Lets a request in, or refuses it: 429 past the rate limit, then 503 with probability
   * failRate. Says whether its connection is to be dropped after it is applied.
   * Random draws happen only for rates above 0: first failRate, then dropRate.
   */
  admit(): { drop: boolean } {
    this.checkRate();
    const { failRate, dropRate } = this.current;
    if (failRate > 0 && this.random() < failRate) {
      this.stats.faults.failed++;
      throw new SandboxError('UNAVAILABLE', 'injected failure (--fail-rate): nothing was applied');
    }
    return { drop: dropRate > 0 && this.random() < dropRate };
  }

  /** 413 when a request carries more records than maxRecords. */
  checkRecordCount(count: number): void {
    const { maxRecords } = this.current;
    if (maxRecords > 0 && count > maxRecords) {
      this.stats.faults.tooManyRecords++;
      throw new SandboxError(
        'TOO_MANY_RECORDS',
        `${count} records in one request; at most ${maxRecords} are accepted`,
      );
    }
  }

  /** Waits latencyMs before an answer goes out (or a dropped connection is destroyed). */
  async delay(method: string): Promise<void> {
    const { latencyMs } = this.current;
    if (latencyMs === 0) return;
    this.stats.faults.delayed++;
    await this.sleep(latencyMs, method);
  }

  private checkRate(): void {
    const { rateLimit } = this.current;
    if (rateLimit === 0) return;
    const now = this.now();
    while (this.admitted.length > 0 && (this.admitted[0] ?? 0) <= now - WINDOW_MS)
      this.admitted.shift();
    if (this.admitted.length >= rateLimit) {
      this.stats.faults.rateLimited++;
      const waitMs = (this.admitted[0] ?? now) + WINDOW_MS - now;
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new SandboxError('RATE_LIMITED', `more than ${rateLimit} requests per second`, {
        headers: { 'retry-after': String(seconds) },
      });
    }
    this.admitted.push(now);
  }
}
