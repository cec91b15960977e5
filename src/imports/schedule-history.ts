/**
 * What each run of an import schedule did, newest first, kept in Redis under porter's prefix:
 * the file's sha256, the import it started, or why it started none (unchanged, unreadable).
 */
import type { Redis } from 'ioredis';

export type ScheduleRunOutcome = 'imported' | 'unchanged' | 'failed';

export interface ScheduleRun {
  /** When the run happened (ISO time). */
  at: string;
  outcome: ScheduleRunOutcome;
  /** The BullMQ job of the run. */
  jobId?: string;
  sha256?: string;
  importId?: string;
  /** Why no import was started, or why it failed. */
  note?: string;
}

/** The content the last import of a schedule was started with. */
export interface LastScheduledImport {
  /** The file's digest; unset for a schedule that reads a directory source. */
  sha256?: string;
  jobId?: string;
  /** Unset while the import is being created. */
  importId?: string;
}

export interface ScheduleHistoryOptions {
  redis: Redis;
  prefix: string;
  /** Seconds the history stays after its last run. @defaultValue 90 days */
  ttlSeconds?: number;
  /** Runs kept per schedule. @defaultValue 100 */
  maxRuns?: number;
}

export class ScheduleHistory {
  private readonly ttlSeconds: number;
  private readonly maxRuns: number;

  constructor(private readonly options: ScheduleHistoryOptions) {
    this.ttlSeconds = options.ttlSeconds ?? 90 * 24 * 3600;
    this.maxRuns = options.maxRuns ?? 100;
  }

  private runsKey(name: string): string {
    return `${this.options.prefix}:import-schedule:{${name}}:runs`;
  }

  private lastKey(name: string): string {
    // one Cluster slot per schedule: removing it deletes both keys at once
    return `${this.options.prefix}:import-schedule:{${name}}:last`;
  }

  async add(name: string, run: ScheduleRun): Promise<void> {
    const key = this.runsKey(name);
    await this.options.redis
      .multi()
      .lpush(key, JSON.stringify(run))
      .ltrim(key, 0, this.maxRuns - 1)
      .expire(key, this.ttlSeconds)
      .exec();
  }

  /** The runs, newest first. */
  async runs(name: string, limit = this.maxRuns): Promise<ScheduleRun[]> {
    const items = await this.options.redis.lrange(this.runsKey(name), 0, limit - 1);
    return items.map((item) => JSON.parse(item) as ScheduleRun);
  }

  async last(name: string): Promise<LastScheduledImport | undefined> {
    const text = await this.options.redis.get(this.lastKey(name));
    return text ? (JSON.parse(text) as LastScheduledImport) : undefined;
  }

  async setLast(name: string, last: LastScheduledImport): Promise<void> {
    await this.options.redis.set(this.lastKey(name), JSON.stringify(last), 'EX', this.ttlSeconds);
  }

  /** Forgets the schedule's runs (when it is removed). */
  async clear(name: string): Promise<void> {
    await this.options.redis.del(this.runsKey(name), this.lastKey(name));
  }
}
