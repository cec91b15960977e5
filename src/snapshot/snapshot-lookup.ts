/**
 * Planning against a snapshot: the records an import needs, read from Redis in one round trip per
 * batch instead of one GET per record. A reference (a group or user named in a record) that the
 * snapshot does not know is asked of the server before it is called unknown: it may have been
 * created after the snapshot was taken.
 */
import type { Redis } from 'ioredis';
import type { ResourceName } from '../admin/resources.js';
import type { AclRecord, GroupRecord, UserRecord } from '../admin/schemas.js';
import { NOT_READ, type DirectoryView, type ReadAheadView } from '../plan/directory-view.js';
import { lookalikeKey } from '../ingest/lookalike.js';
import { decodeCompact } from './record-codec.js';
import { aclIdField, aclNameField, type SnapshotKeys } from './snapshot-keys.js';

export interface SnapshotLookupOptions {
  redis: Redis;
  keys: SnapshotKeys;
  /** The import's resource: its records are in `keys.records`. */
  resource: ResourceName;
  /** The server, for references the snapshot does not know. */
  server: DirectoryView;
  /**
   * `keys.lookalikes` holds every server key by its look-alike form (a streamed import's
   * snapshot), not the upload's keys that look like one. @defaultValue false
   */
  lookalikesByForm?: boolean;
}

/** Adds a reference as the name it may be (a bare number may be a name too). */
function addName(names: Set<string>, item: unknown): void {
  if (typeof item === 'string') names.add(item.replace(/^name:/, ''));
  else if (typeof item === 'number') names.add(String(item));
}

/** A hash field's value as read ahead: null is "read, absent"; no entry is "not read". */
type ReadAhead = Map<string, string | null>;

export class SnapshotLookup implements DirectoryView {
  private readonly records: ReadAhead = new Map();
  private readonly groupIds: ReadAhead = new Map();
  private readonly userIds: ReadAhead = new Map();
  private readonly groupNames: ReadAhead = new Map();
  private readonly lookalikes: ReadAhead = new Map();

  constructor(private readonly options: SnapshotLookupOptions) {}

  get reads(): number {
    return this.options.server.reads;
  }

  async prefetch(records: readonly Record<string, unknown>[]): Promise<void> {
    const { resource } = this.options;
    const recordFields = new Set<string>();
    const groupNames = new Set<string>();
    const userNames = new Set<string>();
    for (const record of records) {
      if (resource === 'users') {
        if (typeof record.username === 'string') recordFields.add(record.username);
        if (Array.isArray(record.groups))
          for (const item of record.groups) addName(groupNames, item);
      } else if (resource === 'groups') {
        if (typeof record.name === 'string') recordFields.add(record.name);
        if (Array.isArray(record.users)) for (const item of record.users) addName(userNames, item);
      } else {
        if (typeof record.id === 'string') recordFields.add(aclIdField(record.id));
        addName(groupNames, record.groupId);
      }
    }
    const { redis, keys } = this.options;
    const pipeline = redis.pipeline();
    const mainKeys = resource === 'acls' ? [] : [...recordFields];
    // what an earlier prefetch of this batch read is not read again
    const unread = (cache: ReadAhead, fields: Iterable<string>): string[] =>
      [...fields].filter((field) => !cache.has(field));
    const reads: [ReadAhead, string[]][] = [
      [this.records, unread(this.records, recordFields)],
      [this.groupIds, unread(this.groupIds, groupNames)],
      [this.userIds, unread(this.userIds, userNames)],
      [
        this.lookalikes,
        unread(
          this.lookalikes,
          mainKeys.map((key) => this.lookalikeField(key)),
        ),
      ],
    ];
    const hashes = [keys.records, keys.groupIds, keys.userIds, keys.lookalikes];
    reads.forEach(([, fields], index) => {
      if (fields.length > 0) pipeline.hmget(hashes[index]!, ...fields);
    });
    if (pipeline.length === 0) return;
    const replies = (await pipeline.exec()) ?? [];
    let replyIndex = 0;
    for (const [target, fields] of reads) {
      if (fields.length === 0) continue;
      const [error, values] = replies[replyIndex++]!;
      if (error) throw error;
      fields.forEach((field, index) => target.set(field, (values as (string | null)[])[index]!));
    }
  }

  readAhead(): ReadAheadView {
    const { resource } = this.options;
    const known = (cache: ReadAhead, field: string): string | null | typeof NOT_READ => {
      const value = cache.get(field);
      return value === undefined ? NOT_READ : value;
    };
    // a name the snapshot does not hold is asked of the server (lateReference), unless a number
    const late = (name: string): undefined | typeof NOT_READ =>
      /^\d+$/.test(name) ? undefined : NOT_READ;
    const record = <T>(field: string): T | undefined | typeof NOT_READ => {
      const text = known(this.records, field);
      if (text === NOT_READ || text === null) return text === null ? undefined : NOT_READ;
      return decodeCompact(resource, text) as T;
    };
    return {
      user: (username) => {
        if (resource === 'users') return record<UserRecord>(username);
        const id = known(this.userIds, username);
        if (id === NOT_READ) return NOT_READ;
        return id === null ? late(username) : { userId: Number(id), username };
      },
      group: (name) => {
        if (resource === 'groups') return record<GroupRecord>(name);
        const id = known(this.groupIds, name);
        if (id === NOT_READ) return NOT_READ;
        return id === null ? late(name) : { id: Number(id), name };
      },
      groupById: (id) => {
        const name = known(this.groupNames, String(id));
        // one the snapshot does not hold is asked of the server
        return name === NOT_READ || name === null ? NOT_READ : { id, name };
      },
      // user names by id are not read ahead
      userById: () => NOT_READ,
      lookalikeOf: (key) => {
        const lookalike = known(this.lookalikes, this.lookalikeField(key));
        return lookalike === null || lookalike === key ? undefined : lookalike;
      },
    };
  }

  async user(username: string): Promise<UserRecord | undefined> {
    if (this.options.resource === 'users') return this.record(username);
    const id = await this.read(this.userIds, this.options.keys.userIds, username);
    if (id === null) return this.lateReference(username, () => this.options.server.user(username));
    return { userId: Number(id), username };
  }

  async userById(userId: number): Promise<UserRecord | undefined> {
    const name = await this.read(new Map(), this.options.keys.userNames, String(userId));
    if (name === null) return this.options.server.userById(userId);
    return { userId, username: name };
  }

  async group(name: string): Promise<GroupRecord | undefined> {
    if (this.options.resource === 'groups') return this.record(name);
    const id = await this.read(this.groupIds, this.options.keys.groupIds, name);
    if (id === null) return this.lateReference(name, () => this.options.server.group(name));
    return { id: Number(id), name };
  }

  async groupById(id: number): Promise<GroupRecord | undefined> {
    const name = await this.read(this.groupNames, this.options.keys.groupNames, String(id));
    if (name === null) return this.options.server.groupById(id);
    return { id, name };
  }

  async lookalikeOf(key: string): Promise<string | undefined> {
    const field = this.lookalikeField(key);
    const lookalike = await this.read(this.lookalikes, this.options.keys.lookalikes, field);
    return lookalike === null || lookalike === key ? undefined : lookalike;
  }

  /** The field a key's look-alike is found under: the key, or its form (lookalikesByForm). */
  private lookalikeField(key: string): string {
    return this.options.lookalikesByForm === true ? lookalikeKey(key) : key;
  }

  async aclById(id: string): Promise<AclRecord | undefined> {
    return this.record(aclIdField(id));
  }

  async aclByName(groupId: number, name: string): Promise<AclRecord | undefined> {
    const id = await this.read(
      this.records,
      this.options.keys.records,
      aclNameField(groupId, name),
    );
    return id === null ? undefined : this.aclById(id);
  }

  /**
   * A name the snapshot does not hold may belong to a record created since: the server is asked.
   * A number is not: it is tried as a name only to tell it from an id (see reference-rule.ts),
   * and asking the server for every id would cost a read per reference.
   */
  private lateReference<T>(
    name: string,
    ask: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    return /^\d+$/.test(name) ? Promise.resolve(undefined) : ask();
  }

  private async record<T>(field: string): Promise<T | undefined> {
    const text = await this.read(this.records, this.options.keys.records, field);
    return text === null ? undefined : (decodeCompact(this.options.resource, text) as T);
  }

  private async read(cache: ReadAhead, hash: string, field: string): Promise<string | null> {
    const known = cache.get(field);
    if (known !== undefined) return known;
    const value = await this.options.redis.hget(hash, field);
    cache.set(field, value);
    return value;
  }
}
