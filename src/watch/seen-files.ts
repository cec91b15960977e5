/**
 * The contents a watched folder has imported, by sha256, kept in Redis under porter's prefix
 * for a while: a file whose content was imported before is never imported again, even after
 * a restart or from a second watcher of the same folder.
 */
import type { Redis } from 'ioredis';

/** What porter remembers of the first file with a content. */
export interface SeenFile {
  /** File name it came in under. */
  name: string;
  /** When it was claimed (ISO time). */
  at: string;
  /** The import it started, once known. */
  importId?: string;
}

export type SeenClaim = { kind: 'first' } | { kind: 'seen'; first: SeenFile };

export interface SeenFilesOptions {
  redis: Redis;
  prefix: string;
  /** How long a content is remembered. @defaultValue 90 days */
  ttlSeconds?: number;
}

export class SeenFiles {
  private readonly ttlSeconds: number;

  constructor(private readonly options: SeenFilesOptions) {
    this.ttlSeconds = options.ttlSeconds ?? 90 * 24 * 3600;
  }

  private key(sha256: string): string {
    return `${this.options.prefix}:watch:seen:${sha256}`;
  }

  /** Claims a content for one file, atomically: only the first claim of a content wins. */
  async claim(sha256: string, name: string, now = new Date()): Promise<SeenClaim> {
    const entry: SeenFile = { name, at: now.toISOString() };
    const { redis } = this.options;
    const set = await redis.set(
      this.key(sha256),
      JSON.stringify(entry),
      'EX',
      this.ttlSeconds,
      'NX',
    );
    if (set === 'OK') return { kind: 'first' };
    const stored = await redis.get(this.key(sha256));
    return { kind: 'seen', first: stored ? parseSeen(stored) : entry };
  }

  /** Notes the import a claimed content started. */
  async setImport(sha256: string, name: string, importId: string, at: string): Promise<void> {
    const entry: SeenFile = { name, at, importId };
    await this.options.redis.set(
      this.key(sha256),
      JSON.stringify(entry),
      'EX',
      this.ttlSeconds,
      'XX',
    );
  }

  /** Forgets a claim whose import never started (the file stays to be tried again). */
  async release(sha256: string): Promise<void> {
    await this.options.redis.del(this.key(sha256));
  }

  /** What is remembered of a content, if anything. */
  async get(sha256: string): Promise<SeenFile | undefined> {
    const stored = await this.options.redis.get(this.key(sha256));
    return stored ? parseSeen(stored) : undefined;
  }
}

function parseSeen(text: string): SeenFile {
  try {
    const value = JSON.parse(text) as Partial<SeenFile>;
    return {
      name: typeof value.name === 'string' ? value.name : '?',
      at: typeof value.at === 'string' ? value.at : '?',
      importId: typeof value.importId === 'string' ? value.importId : undefined,
    };
  } catch {
    return { name: '?', at: '?' };
  }
}
