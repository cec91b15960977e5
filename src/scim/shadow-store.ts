/**
 * What SCIM sent that the DAM has no field for (a formatted name, second emails, addresses),
 * and when porter first and last wrote each resource, by target and DAM id. The DAM record stays
 * the truth for what it holds (userName, names, status, groups, the externalId anchor); losing
 * this store loses only those extra attributes, which the identity provider sends again.
 */
import type { Redis } from 'ioredis';
import { hashTag } from '../redis/key-tags.js';
import type { JsonObject } from './attribute-path.js';
import { withoutWriteOnly, type ResourceKind } from './resource-schemas.js';

export interface Shadow {
  resource: JsonObject;
  created: string;
  lastModified: string;
}

export class ShadowStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(target: string, kind: ResourceKind): string {
    return `${this.prefix}:scim:${hashTag(target)}:${kind === 'User' ? 'users' : 'groups'}`;
  }

  async get(target: string, kind: ResourceKind, id: string): Promise<Shadow | undefined> {
    const json = await this.redis.hget(this.key(target, kind), id);
    return json === null ? undefined : (JSON.parse(json) as Shadow);
  }

  async all(target: string, kind: ResourceKind): Promise<Map<string, Shadow>> {
    const entries = await this.redis.hgetall(this.key(target, kind));
    return new Map(Object.entries(entries).map(([id, json]) => [id, JSON.parse(json) as Shadow]));
  }

  /** Keeps the resource, never its password; `created` stays the first write's. */
  async put(
    target: string,
    kind: ResourceKind,
    id: string,
    resource: JsonObject,
    now = new Date(),
  ): Promise<Shadow> {
    const old = await this.get(target, kind, id);
    const shadow: Shadow = {
      resource: withoutWriteOnly(kind, resource),
      created: old?.created ?? now.toISOString(),
      lastModified: now.toISOString(),
    };
    await this.redis.hset(this.key(target, kind), id, JSON.stringify(shadow));
    return shadow;
  }

  async remove(target: string, kind: ResourceKind, id: string): Promise<void> {
    await this.redis.hdel(this.key(target, kind), id);
  }
}
