/**
 * Keeps a migration's source records in Redis as they are read (from a bundle or a live
 * target): about 1000 at a time, one write in flight while the next are read, each record with
 * its natural key (ACLs: their group's name and their own, so groups must come first).
 */
import type { ResourceName } from '../admin/resources.js';
import type { MigrationStore } from './migration-store.js';
import { aclKeyText, sourceIdOf } from './stage-records.js';

const STAGE_CHUNK = 1000;

export class SourceStager {
  readonly totals: Record<ResourceName, number> = { groups: 0, users: 0, acls: 0 };
  private pending: Promise<void> = Promise.resolve();
  private buffer: Record<string, unknown>[] = [];
  private buffered: ResourceName | undefined;

  constructor(
    private readonly store: MigrationStore,
    private readonly migrationId: string,
  ) {}

  /** Adds records of a section; they reach Redis by the next flush() at the latest. */
  async add(resource: ResourceName, records: readonly Record<string, unknown>[]): Promise<void> {
    if (resource !== this.buffered) await this.flush();
    this.buffered = resource;
    this.totals[resource] += records.length;
    this.buffer.push(...records);
    if (this.buffer.length >= STAGE_CHUNK) await this.flush();
  }

  /** Sends what is buffered; a failed earlier write is thrown here. */
  async flush(): Promise<void> {
    await this.pending;
    if (this.buffered === undefined || this.buffer.length === 0) return;
    this.pending = stageSection(this.store, this.migrationId, this.buffered, this.buffer);
    // a failed write surfaces at the next flush
    this.pending.catch(() => {});
    this.buffer = [];
  }

  /** Every record is in Redis. */
  async done(): Promise<void> {
    await this.flush();
    await this.pending;
  }

  /** Forgets a section read so far (a read that starts again): buffered and stored. */
  async restart(resource: ResourceName): Promise<void> {
    await this.pending.catch(() => {});
    this.pending = Promise.resolve();
    if (this.buffered === resource) this.buffer = [];
    this.totals[resource] = 0;
    await this.store.clearSources(this.migrationId, [resource]);
  }
}

/** Keeps records of a section in Redis with their natural keys (ACLs: group and name). */
async function stageSection(
  store: MigrationStore,
  migrationId: string,
  resource: ResourceName,
  records: readonly Record<string, unknown>[],
): Promise<void> {
  let groupNames = new Map<string, string>();
  if (resource === 'acls') {
    const ids = [...new Set(records.map((record) => String(record.groupId)))];
    const refs = await store.refs(migrationId, 'groups', ids);
    groupNames = new Map(ids.map((id) => [id, refs.get(id)?.key ?? `#${id}`]));
  }
  await store.stageRecords(migrationId, resource, records, (record) => [
    sourceIdOf(resource, record),
    resource === 'users'
      ? String(record.username)
      : resource === 'groups'
        ? String(record.name)
        : aclKeyText(groupNames.get(String(record.groupId)) ?? '', String(record.name)),
  ]);
}
