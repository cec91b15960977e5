/**
 * A migration's state in Redis, so that any worker on any machine can run its next stage and a
 * run cut by a crash goes on where it stopped:
 *
 *   <p>:migration:<id>:meta         hash: state, options, bundle head, totals, per-stage phase and import
 *   <p>:migration:<id>:src:<r>      list: the bundle's (or source target's) records of section r, in order
 *   <p>:migration:<id>:key:<r>      hash: source id → natural key (group name, username, ACL name)
 *   <p>:migration:<id>:map:<r>      hash: source id → target id ("+" for a dry run's planned create)
 *   <p>:migration:<id>:failed:<r>   hash: source id → why it did not migrate
 *   <p>:migrations                  sorted set: migration ids by creation time
 */
import type { Redis } from 'ioredis';
import type { ResourceName } from '../admin/resources.js';
import { RESOURCE_NAMES } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { FINAL_IMPORT_STATES } from '../model/import.js';
import type { ImportStore } from '../results/import-store.js';
import { IMPORT_ID_PATTERN } from '../results/import-id.js';
import { hmgetMany } from '../util/redis.js';
import { DEFAULT_TARGET } from '../targets/targets.js';
import {
  STAGES,
  type MigrationInfo,
  type MigrationOptions,
  type MigrationState,
  type StageInfo,
  type StageName,
  type StagePhase,
} from './migration-model.js';
import { hashTag } from '../redis/key-tags.js';
import type { Principal } from '../auth/principal.js';

/** Who started a migration, and the audit action that did. */
export interface MigrationStarter {
  principal?: Principal;
  actionId?: string;
}

export interface MigrationStoreOptions {
  redis: Redis;
  prefix: string;
  /** Seconds a migration's keys live after its creation. @defaultValue 7 days */
  ttlSeconds?: number;
}

/** A source id's fate so far: its target id, why it failed, or nothing yet. */
export interface SourceRef {
  targetId?: string;
  failed?: string;
  key?: string;
}

export class MigrationStore {
  readonly redis: Redis;
  private readonly prefix: string;
  private readonly ttlSeconds: number;

  constructor(options: MigrationStoreOptions) {
    this.redis = options.redis;
    this.prefix = options.prefix;
    this.ttlSeconds = options.ttlSeconds ?? 7 * 24 * 3600;
  }

  key(migrationId: string, part: string): string {
    // one Cluster slot per migration: its transactions touch several of its keys
    return `${this.prefix}:migration:${hashTag(migrationId)}:${part}`;
  }

  private allKeys(migrationId: string): string[] {
    const keys = [this.key(migrationId, 'meta')];
    for (const resource of RESOURCE_NAMES) {
      for (const part of ['src', 'key', 'map', 'failed']) {
        keys.push(this.key(migrationId, `${part}:${resource}`));
      }
    }
    return keys;
  }

  /**
   * Stores a new migration in `receiving`, with the principal that started it: its stage imports
   * are started by a worker, which acts as that principal.
   */
  async create(
    migrationId: string,
    options: MigrationOptions,
    bundleName: string | undefined,
    starter?: MigrationStarter,
  ): Promise<void> {
    const now = new Date().toISOString();
    const meta: Record<string, string> = {
      state: 'receiving',
      options: JSON.stringify(options),
      createdAt: now,
      updatedAt: now,
    };
    if (bundleName !== undefined) meta.bundleName = bundleName;
    if (starter?.principal) meta.startedBy = JSON.stringify(starter.principal);
    if (starter?.actionId) meta.actionId = starter.actionId;
    for (const stage of STAGES) meta[`${stage}:phase`] = 'pending';
    await this.redis.hset(this.key(migrationId, 'meta'), meta);
    // the index sits in another Cluster slot; ids whose keys are gone are dropped as met
    await this.redis.zadd(`${this.prefix}:migrations`, Date.now(), migrationId);
    await this.expire(migrationId);
  }

  private async expire(migrationId: string): Promise<void> {
    const multi = this.redis.multi();
    for (const key of this.allKeys(migrationId)) multi.expire(key, this.ttlSeconds);
    await multi.exec();
  }

  /** Appends records of a section, with their natural keys. */
  async stageRecords(
    migrationId: string,
    resource: ResourceName,
    records: readonly Record<string, unknown>[],
    keyOf: (record: Record<string, unknown>) => [string, string],
  ): Promise<void> {
    if (records.length === 0) return;
    const keys: string[] = [];
    for (const record of records) keys.push(...keyOf(record));
    await this.redis
      .multi()
      .rpush(this.key(migrationId, `src:${resource}`), ...records.map((r) => JSON.stringify(r)))
      .hset(this.key(migrationId, `key:${resource}`), ...keys)
      .exec();
  }

  /**
   * Empties the source sections (records and natural keys) of these resources: a live read
   * that starts again (after a failed read, a crashed worker) writes them from the start.
   */
  async clearSources(migrationId: string, resources: readonly ResourceName[]): Promise<void> {
    const keys = resources.flatMap((resource) => [
      this.key(migrationId, `src:${resource}`),
      this.key(migrationId, `key:${resource}`),
    ]);
    if (keys.length > 0) await this.redis.del(...keys);
  }

  /** The whole bundle is in: the migration runs. */
  async markReceived(
    migrationId: string,
    head: { source: string; exportedAt: string },
    totals: Record<ResourceName, number>,
  ): Promise<void> {
    await this.redis.hset(this.key(migrationId, 'meta'), {
      state: 'running',
      source: head.source,
      exportedAt: head.exportedAt,
      totals: JSON.stringify(totals),
      updatedAt: new Date().toISOString(),
    });
    await this.expire(migrationId);
  }

  async setState(migrationId: string, state: MigrationState, reason?: string): Promise<void> {
    const now = new Date().toISOString();
    const fields: Record<string, string> = { state, updatedAt: now };
    if (reason !== undefined) fields.reason = reason;
    if (state !== 'running' && state !== 'receiving') fields.finishedAt = now;
    await this.redis.hset(this.key(migrationId, 'meta'), fields);
    await this.expire(migrationId);
  }

  async meta(migrationId: string): Promise<Record<string, string> | undefined> {
    if (!IMPORT_ID_PATTERN.test(migrationId)) return undefined;
    const meta = await this.redis.hgetall(this.key(migrationId, 'meta'));
    return Object.keys(meta).length === 0 ? undefined : meta;
  }

  /** Who started the migration (none for one started before this was recorded). */
  async starter(migrationId: string): Promise<MigrationStarter> {
    const meta = await this.meta(migrationId);
    return {
      ...(meta?.startedBy ? { principal: JSON.parse(meta.startedBy) as Principal } : {}),
      ...(meta?.actionId ? { actionId: meta.actionId } : {}),
    };
  }

  async options(migrationId: string): Promise<MigrationOptions> {
    const meta = await this.meta(migrationId);
    if (!meta?.options) throw new PorterError('PORTER_NOT_FOUND', `no migration ${migrationId}`);
    return JSON.parse(meta.options) as MigrationOptions;
  }

  async setStage(
    migrationId: string,
    stage: StageName,
    fields: { phase?: StagePhase; importId?: string },
  ): Promise<void> {
    const update: Record<string, string> = { stage, updatedAt: new Date().toISOString() };
    if (fields.phase) update[`${stage}:phase`] = fields.phase;
    if (fields.importId) update[`${stage}:import`] = fields.importId;
    await this.redis.hset(this.key(migrationId, 'meta'), update);
  }

  async stageOf(
    migrationId: string,
    stage: StageName,
  ): Promise<{ phase: StagePhase; importId?: string }> {
    const [phase, importId] = await this.redis.hmget(
      this.key(migrationId, 'meta'),
      `${stage}:phase`,
      `${stage}:import`,
    );
    return { phase: (phase ?? 'pending') as StagePhase, importId: importId ?? undefined };
  }

  async sourceCount(migrationId: string, resource: ResourceName): Promise<number> {
    return this.redis.llen(this.key(migrationId, `src:${resource}`));
  }

  async readSource(
    migrationId: string,
    resource: ResourceName,
    start: number,
    count: number,
  ): Promise<Record<string, unknown>[]> {
    const texts = await this.redis.lrange(
      this.key(migrationId, `src:${resource}`),
      start,
      start + count - 1,
    );
    return texts.map((text) => JSON.parse(text) as Record<string, unknown>);
  }

  /** What became of these source ids of a resource so far. */
  async refs(
    migrationId: string,
    resource: ResourceName,
    sourceIds: readonly string[],
  ): Promise<Map<string, SourceRef>> {
    const found = new Map<string, SourceRef>();
    if (sourceIds.length === 0) return found;
    const [targets, failures, keys] = await Promise.all([
      hmgetMany(this.redis, this.key(migrationId, `map:${resource}`), sourceIds),
      hmgetMany(this.redis, this.key(migrationId, `failed:${resource}`), sourceIds),
      hmgetMany(this.redis, this.key(migrationId, `key:${resource}`), sourceIds),
    ]);
    sourceIds.forEach((sourceId, index) => {
      found.set(sourceId, {
        targetId: targets[index] ?? undefined,
        failed: failures[index] ?? undefined,
        key: keys[index] ?? undefined,
      });
    });
    return found;
  }

  /** Records where source ids went; written again after a crash, with the same values. */
  async recordOutcomes(
    migrationId: string,
    resource: ResourceName,
    mapped: readonly [string, string][],
    failed: readonly [string, string][],
  ): Promise<void> {
    const multi = this.redis.multi();
    if (mapped.length > 0) multi.hset(this.key(migrationId, `map:${resource}`), ...mapped.flat());
    if (failed.length > 0)
      multi.hset(this.key(migrationId, `failed:${resource}`), ...failed.flat());
    // the map lives as long as the rest of the migration
    multi.expire(this.key(migrationId, `map:${resource}`), this.ttlSeconds);
    multi.expire(this.key(migrationId, `failed:${resource}`), this.ttlSeconds);
    await multi.exec();
  }

  /**
   * The newest migrations first, at most `limit`. Ids whose keys have expired are dropped from
   * the index as they are met.
   */
  async list(imports: ImportStore, limit: number): Promise<MigrationInfo[]> {
    const index = `${this.prefix}:migrations`;
    const found: MigrationInfo[] = [];
    let start = 0;
    while (found.length < limit) {
      const ids = await this.redis.zrevrange(index, start, start + limit - 1);
      if (ids.length === 0) break;
      const gone: string[] = [];
      for (const id of ids) {
        if (found.length >= limit) break;
        const info = await this.get(id, imports);
        if (info) found.push(info);
        else gone.push(id);
      }
      if (gone.length > 0) await this.redis.zrem(index, ...gone);
      start += ids.length - gone.length;
    }
    return found;
  }

  /** The migration with each stage's counts, read from its import. */
  async get(migrationId: string, imports: ImportStore): Promise<MigrationInfo | undefined> {
    const meta = await this.meta(migrationId);
    if (!meta) return undefined;
    const totals = meta.totals
      ? (JSON.parse(meta.totals) as Record<ResourceName, number>)
      : { groups: 0, users: 0, acls: 0 };
    const stages: StageInfo[] = [];
    for (const stage of STAGES) {
      const phase = (meta[`${stage}:phase`] ?? 'pending') as StagePhase;
      const importId = meta[`${stage}:import`];
      const info: StageInfo = {
        stage,
        phase,
        total: totals[stage === 'memberships' ? 'groups' : stage],
        done: 0,
      };
      if (importId) {
        const imported = await imports.get(importId);
        if (imported) {
          info.importId = importId;
          info.importState = imported.state;
          info.done = imported.done;
          info.counts = imported.counts;
          info.actions = imported.actions;
          if (FINAL_IMPORT_STATES.has(imported.state) && imported.total > 0) {
            info.total = imported.total;
          }
        }
      }
      stages.push(info);
    }
    const options = JSON.parse(meta.options ?? '{}') as MigrationOptions;
    const startedBy = meta.startedBy ? (JSON.parse(meta.startedBy) as Principal).name : undefined;
    return {
      id: migrationId,
      state: meta.state as MigrationState,
      reason: meta.reason,
      options,
      ...(options.from?.target !== undefined ? { from: options.from.target } : {}),
      to: options.target ?? DEFAULT_TARGET,
      bundle: { name: meta.bundleName, source: meta.source, exportedAt: meta.exportedAt },
      createdAt: meta.createdAt ?? '',
      updatedAt: meta.updatedAt ?? '',
      finishedAt: meta.finishedAt,
      ...(startedBy !== undefined ? { startedBy } : {}),
      ...(meta.actionId !== undefined ? { actionId: meta.actionId } : {}),
      totals,
      stage: meta.stage as StageName | undefined,
      stages,
    };
  }
}

/** A new migration id: `mig_` and the same sortable tail as an import id. */
export function isMigrationId(id: string): boolean {
  return id.startsWith('mig_') && IMPORT_ID_PATTERN.test(id);
}
