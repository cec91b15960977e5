/**
 * What porter remembers of a source between runs, per resource, in one Redis hash
 * (`<p>:source:{<name>}`): the entries of its last full read (an empty read where there were
 * many is held) and the change mark an incremental read starts from.
 */
import type { Redis } from 'ioredis';
import type { SourceResource } from './read-source.js';

export interface SourceRunState {
  /** Entries of the last full read. */
  entries?: number;
  /** When the last full read was taken (ISO). */
  fullAt?: string;
  /** The latest change time seen (modifyTimestamp / whenChanged). */
  mark?: string;
}

export class SourceState {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  key(name: string): string {
    return `${this.prefix}:source:{${name}}`;
  }

  async get(name: string, resource: SourceResource): Promise<SourceRunState> {
    const [entries, fullAt, mark] = await this.redis.hmget(
      this.key(name),
      `${resource}:entries`,
      `${resource}:fullAt`,
      `${resource}:mark`,
    );
    return {
      ...(entries !== null ? { entries: Number(entries) } : {}),
      ...(fullAt !== null ? { fullAt } : {}),
      ...(mark !== null ? { mark } : {}),
    };
  }

  /** Records a read: a full one sets the entries; the mark only moves forward. */
  async record(
    name: string,
    resource: SourceResource,
    read: { entries: number; mark?: string; full: boolean },
  ): Promise<void> {
    const before = await this.get(name, resource);
    const fields: Record<string, string> = {};
    if (read.full) {
      fields[`${resource}:entries`] = String(read.entries);
      fields[`${resource}:fullAt`] = new Date().toISOString();
    }
    if (read.mark !== undefined && (before.mark === undefined || read.mark > before.mark)) {
      fields[`${resource}:mark`] = read.mark;
    }
    if (Object.keys(fields).length > 0) await this.redis.hset(this.key(name), fields);
  }
}
