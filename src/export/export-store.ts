/**
 * Export state in Redis, like imports: one hash per export (`<prefix>:export:<id>`) that lives
 * PORTER_RESULT_TTL_DAYS after its last write, and a sorted set of ids by creation time for
 * listing. Any process can read an export's state, progress and files while a worker runs it.
 */
import type { Redis } from 'ioredis';
import { PorterError } from '../errors/porter-error.js';
import { isValidExportId } from './export-id.js';
import type {
  ExportCounts,
  ExportFile,
  ExportInfo,
  ExportRequest,
  ExportScheduleRef,
  ExportState,
} from './export-types.js';
import type { ExportManifest } from './manifest.js';

export interface ExportStoreOptions {
  redis: Redis;
  /** Key prefix (PORTER_PREFIX). */
  prefix: string;
  /** Seconds an export's state lives after its last write. @defaultValue 7 days */
  ttlSeconds?: number;
}

export interface CreateExportInit {
  id: string;
  request: ExportRequest;
  dir: string;
  schedule?: ExportScheduleRef;
}

const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;

/** Sets `failed` (reason, finishedAt) on an export that exists and has not ended; 1 if it did. */
const FAIL_UNLESS_FINAL = `
local state = redis.call('HGET', KEYS[1], 'state')
if not state or state == 'completed' or state == 'failed' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'failed', 'reason', ARGV[1], 'finishedAt', ARGV[2], 'updatedAt', ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
`;

/** The hash of one export. */
export function exportKey(prefix: string, exportId: string): string {
  return `${prefix}:export:${exportId}`;
}

/** Sorted set of export ids scored by creation time (ms). */
export function exportIndexKey(prefix: string): string {
  return `${prefix}:exports`;
}

function parseJson<T>(text: string | undefined, fallback: T): T {
  if (text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** ExportInfo from its hash; undefined when the export does not exist. */
export function decodeExport(hash: Record<string, string>): ExportInfo | undefined {
  if (hash.id === undefined || hash.state === undefined || hash.request === undefined) {
    return undefined;
  }
  const info: ExportInfo = {
    id: hash.id,
    state: hash.state as ExportState,
    request: parseJson<ExportRequest>(hash.request, { resource: 'all', format: 'csv', outDir: '' }),
    createdAt: hash.createdAt ?? '',
    updatedAt: hash.updatedAt ?? hash.createdAt ?? '',
    dir: hash.dir ?? '',
    written: Number(hash.written ?? 0) || 0,
    counts: parseJson<ExportCounts>(hash.counts, {}),
    files: parseJson<ExportFile[]>(hash.files, []),
    warnings: parseJson<string[]>(hash.warnings, []),
  };
  if (hash.schedule !== undefined)
    info.schedule = parseJson<ExportScheduleRef>(hash.schedule, { name: '' });
  if (hash.reason !== undefined) info.reason = hash.reason;
  if (hash.startedAt !== undefined) info.startedAt = hash.startedAt;
  if (hash.finishedAt !== undefined) info.finishedAt = hash.finishedAt;
  if (hash.removedAt !== undefined) info.removedAt = hash.removedAt;
  return info;
}

/** State of every export: created when queued (or when a schedule fires), updated by the worker. */
export class ExportStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly ttlSeconds: number;

  constructor(options: ExportStoreOptions) {
    this.redis = options.redis;
    this.prefix = options.prefix;
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  }

  /** Creates the export `queued`; when it exists already (a retried job), returns it as it is. */
  async create(init: CreateExportInit): Promise<ExportInfo> {
    const key = exportKey(this.prefix, init.id);
    const now = new Date();
    if ((await this.redis.hsetnx(key, 'id', init.id)) === 1) {
      const fields: Record<string, string> = {
        state: 'queued',
        request: JSON.stringify(init.request),
        dir: init.dir,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
        written: '0',
      };
      if (init.schedule) fields.schedule = JSON.stringify(init.schedule);
      const indexKey = exportIndexKey(this.prefix);
      // the export and the index sit in different Cluster slots: one transaction each
      await this.redis.multi().hset(key, fields).expire(key, this.ttlSeconds).exec();
      await this.redis
        .multi()
        .zadd(indexKey, now.getTime(), init.id)
        .zremrangebyscore(indexKey, '-inf', now.getTime() - this.ttlSeconds * 1000)
        .exec();
    }
    return this.require(init.id);
  }

  /** The export, or undefined (unknown, expired, or an id that cannot be one). */
  async get(exportId: string): Promise<ExportInfo | undefined> {
    if (!isValidExportId(exportId)) return undefined;
    return decodeExport(await this.redis.hgetall(exportKey(this.prefix, exportId)));
  }

  /** The export, or PORTER_NOT_FOUND. */
  async require(exportId: string): Promise<ExportInfo> {
    const info = await this.get(exportId);
    if (!info) {
      throw new PorterError(
        'PORTER_NOT_FOUND',
        `no export ${exportId} (export state expires after ${this.ttlSeconds / 86_400} days)`,
      );
    }
    return info;
  }

  /** Newest first. */
  async list(limit = 100): Promise<ExportInfo[]> {
    const ids = await this.redis.zrevrange(exportIndexKey(this.prefix), 0, limit - 1);
    const infos = await Promise.all(ids.map((id) => this.get(id)));
    return infos.filter((info): info is ExportInfo => info !== undefined);
  }

  /** How many of the `limit` newest exports are in each state (bounded work, for metrics). */
  async countStates(limit = 1000): Promise<Map<string, number>> {
    const ids = await this.redis.zrevrange(exportIndexKey(this.prefix), 0, limit - 1);
    const counts = new Map<string, number>();
    if (ids.length === 0) return counts;
    // one command each (auto-pipelined): on a Cluster the exports sit in different slots
    const states = await Promise.all(
      ids.map((id) => this.redis.hget(exportKey(this.prefix, id), 'state')),
    );
    for (const state of states) {
      if (typeof state === 'string') counts.set(state, (counts.get(state) ?? 0) + 1);
    }
    return counts;
  }

  /** A worker took the export. */
  async markRunning(exportId: string): Promise<void> {
    const now = new Date().toISOString();
    await this.update(exportId, { state: 'running', startedAt: now });
  }

  /** Records written so far, per resource and in all. */
  async progress(exportId: string, written: number, counts: Readonly<ExportCounts>): Promise<void> {
    await this.update(exportId, { written: String(written), counts: JSON.stringify(counts) });
  }

  /** The run completed: its counts, files and warnings, from the manifest. */
  async complete(exportId: string, manifest: ExportManifest): Promise<void> {
    const written = manifest.files.reduce((sum, file) => sum + file.records, 0);
    await this.update(exportId, {
      state: 'completed',
      finishedAt: manifest.finishedAt,
      written: String(written),
      counts: JSON.stringify(manifest.counts),
      files: JSON.stringify(manifest.files),
      warnings: JSON.stringify(manifest.warnings),
    });
  }

  /** The run was interrupted (its worker stopped): it waits for another worker. */
  async requeue(exportId: string): Promise<void> {
    await this.update(exportId, { state: 'queued', written: '0', counts: '{}' });
  }

  /** The run failed, with the reason. */
  async fail(exportId: string, reason: string): Promise<void> {
    await this.update(exportId, {
      state: 'failed',
      reason,
      finishedAt: new Date().toISOString(),
    });
  }

  /**
   * The run failed outside the worker's own handling (its job failed as stalled, say): marks
   * it failed with the reason unless it already ended; true when it did.
   */
  async failUnlessFinal(exportId: string, reason: string): Promise<boolean> {
    const now = new Date().toISOString();
    const changed = await this.redis.eval(
      FAIL_UNLESS_FINAL,
      1,
      exportKey(this.prefix, exportId),
      reason,
      now,
      this.ttlSeconds,
    );
    return Number(changed) === 1;
  }

  /** Retention removed these runs' files: their state says so (runs no longer kept are skipped). */
  async markRemoved(exportIds: readonly string[]): Promise<void> {
    const removedAt = new Date().toISOString();
    for (const exportId of exportIds) {
      if (!isValidExportId(exportId)) continue;
      // HSET on an expired run would make a hash without its state: set it only where it is
      const key = exportKey(this.prefix, exportId);
      if ((await this.redis.exists(key)) === 1) await this.redis.hset(key, 'removedAt', removedAt);
    }
  }

  private async update(exportId: string, fields: Record<string, string>): Promise<void> {
    const key = exportKey(this.prefix, exportId);
    await this.redis
      .multi()
      .hset(key, { ...fields, updatedAt: new Date().toISOString() })
      .expire(key, this.ttlSeconds)
      .exec();
  }
}
