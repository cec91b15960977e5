/**
 * One side of a diff, spilled to Redis so memory does not grow with the directory: each record
 * without its quirks under its natural key, and each id's name, to read references by name.
 *
 *   <base>:<side>:names:<groups|users>   hash: id → name
 *   <base>:<side>:rec:<resource>         hash: natural key → comparable fields (JSON)
 *   <base>:<side>:acl-raw                list: ACLs until their groups' names are known
 *
 * Every key expires after an hour, and `drop()` removes them when the diff ends.
 */
import type { Redis } from 'ioredis';
import type { ResourceName } from '../admin/resources.js';
import { hmgetMany } from '../util/redis.js';
import { aclDiffKey, comparable } from './comparable.js';

const TTL_SECONDS = 3600;
const CHUNK = 500;

export class DiffIndex {
  private readonly touched = new Set<string>();

  constructor(
    private readonly redis: Redis,
    /** `<prefix>:diff:<run>:<side>` */
    readonly base: string,
  ) {}

  recKey(resource: ResourceName): string {
    return `${this.base}:rec:${resource}`;
  }

  namesKey(resource: 'groups' | 'users'): string {
    return `${this.base}:names:${resource}`;
  }

  private touch(key: string): string {
    this.touched.add(key);
    return key;
  }

  /** Adds records of one resource. */
  async add(resource: ResourceName, records: readonly Record<string, unknown>[]): Promise<void> {
    if (records.length === 0) return;
    const multi = this.redis.multi();
    if (resource === 'acls') {
      const raw = this.touch(`${this.base}:acl-raw`);
      multi.rpush(raw, ...records.map((record) => JSON.stringify(comparable('acls', record))));
      multi.expire(raw, TTL_SECONDS);
    } else {
      const names: string[] = [];
      const recs: string[] = [];
      for (const record of records) {
        const item = comparable(resource, record);
        names.push(item.id, item.key);
        recs.push(item.key, JSON.stringify(item.fields));
      }
      const namesKey = this.touch(this.namesKey(resource));
      const recKey = this.touch(this.recKey(resource));
      multi.hset(namesKey, ...names).hset(recKey, ...recs);
      multi.expire(namesKey, TTL_SECONDS).expire(recKey, TTL_SECONDS);
    }
    await multi.exec();
  }

  /** Once every group is in: the ACLs go under their group's name and their own. */
  async keyAcls(): Promise<void> {
    const raw = `${this.base}:acl-raw`;
    const recKey = this.touch(this.recKey('acls'));
    const total = await this.redis.llen(raw);
    for (let start = 0; start < total; start += CHUNK) {
      const texts = await this.redis.lrange(raw, start, start + CHUNK - 1);
      const items = texts.map(
        (text) => JSON.parse(text) as { key: string; groupId: string; fields: object },
      );
      const groupIds = [...new Set(items.map((item) => item.groupId))];
      const names = await hmgetMany(this.redis, this.namesKey('groups'), groupIds);
      const nameOf = new Map(groupIds.map((id, index) => [id, names[index] ?? `#${id}`]));
      const pairs: string[] = [];
      for (const item of items) {
        pairs.push(aclDiffKey(nameOf.get(item.groupId)!, item.key), JSON.stringify(item.fields));
      }
      await this.redis
        .multi()
        .hset(recKey, ...pairs)
        .expire(recKey, TTL_SECONDS)
        .exec();
    }
    await this.redis.del(raw);
  }

  /** Names of ids of a resource; an id unknown to this side reads `#id`. */
  async names(resource: 'groups' | 'users', ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const names = await hmgetMany(this.redis, this.namesKey(resource), ids);
    return new Map(ids.map((id, index) => [id, names[index] ?? `#${id}`]));
  }

  async drop(): Promise<void> {
    const keys = [...this.touched, `${this.base}:acl-raw`];
    await this.redis.del(...keys);
  }
}
