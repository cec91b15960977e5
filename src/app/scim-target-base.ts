/**
 * What the SCIM use cases of one target share (docs/scim.md): the target's admin client, the
 * SCIM attributes kept beside the DAM records (the shadow store), and the reads — users and
 * groups listed, filtered and paged, one read by id, each shown as a SCIM resource. The writes
 * are scim-groups.ts (groups) and scim.ts (users).
 */
import type { AdminClient } from '../admin/client.js';
import type { GroupRecord, UserRecord } from '../admin/schemas.js';
import { PorterError } from '../errors/porter-error.js';
import type { JsonObject } from '../scim/attribute-path.js';
import { groupResource, userResource } from '../scim/dam-views.js';
import { equalityOn, matches, parseFilter } from '../scim/filter.js';
import { listResponse, type ListResponse, type Paging } from '../scim/list-response.js';
import { project, type Projection } from '../scim/projection.js';
import type { ResourceKind } from '../scim/resource-schemas.js';
import { ShadowStore } from '../scim/shadow-store.js';
import { KeyedSerial } from '../util/keyed-serial.js';
import { OnePer } from '../util/one-per.js';
import type { PorterContext } from './context.js';
import { noteUserCount, userReadGatherer } from './scim-read-gather.js';

/** Per admin client (per target, per process), the writes of each resource, one at a time. */
const resourceWrites = new OnePer<AdminClient, KeyedSerial<string>>();

export interface ScimQuery extends Projection {
  filter?: string;
  paging: Paging;
}

/** A written resource, with what the answer's headers need. */
export interface ScimWritten {
  resource: JsonObject;
  version: string;
  location: string;
}

function notFound(kind: ResourceKind, id: string): PorterError {
  return new PorterError('PORTER_NOT_FOUND', `no ${kind} with id "${id}" on this target`);
}

function damId(kind: ResourceKind, id: string): number {
  if (!/^\d{1,15}$/.test(id)) throw notFound(kind, id);
  return Number(id);
}

export class ScimTargetBase {
  protected readonly shadows: ShadowStore;

  /** `base`: the target's SCIM URL, for `location` and `$ref`. */
  constructor(
    protected readonly context: PorterContext,
    protected readonly target: string,
    protected readonly client: AdminClient,
    protected readonly base: string,
  ) {
    this.shadows = new ShadowStore(context.redis, context.env.PORTER_PREFIX);
  }

  // ---- reads ----

  protected async users(filter?: string): Promise<UserRecord[]> {
    // userName eq: the DAM answers by username (compared exactly; the filter ignores case)
    const parsed = filter ? parseFilter(filter, 'User') : undefined;
    const name = parsed ? equalityOn(parsed, 'userName') : undefined;
    if (name !== undefined) {
      const exact = await this.client.listUsers({ username: name });
      if (exact.length > 0) return exact;
    }
    return this.allUsers();
  }

  /** Every user of the target (and its size noted, for the gathered reads). */
  protected async allUsers(): Promise<UserRecord[]> {
    const users = await this.client.listUsers();
    noteUserCount(this.client, users.length);
    return users;
  }

  protected async groupNames(): Promise<Map<number, string>> {
    const groups = await this.client.listGroups();
    return new Map(groups.map((group) => [group.id!, group.name ?? '']));
  }

  protected async userNames(): Promise<Map<number, string>> {
    const users = await this.allUsers();
    return new Map(users.map((user) => [user.userId!, user.username ?? '']));
  }

  async listUsers(query: ScimQuery): Promise<ListResponse> {
    const filter = query.filter ? parseFilter(query.filter, 'User') : undefined;
    const [users, shadows, groupNames] = await Promise.all([
      this.users(query.filter),
      this.shadows.all(this.target, 'User'),
      this.groupNames(),
    ]);
    const all = users
      .filter((user) => user.userId !== undefined)
      .sort((a, b) => a.userId! - b.userId!)
      .map((user) => userResource(user, shadows.get(String(user.userId)), groupNames, this.base))
      .filter((resource) => !filter || matches(filter, resource));
    const page = listResponse(all, query.paging);
    page.Resources = page.Resources.map((resource) => project('User', resource, query));
    return page;
  }

  async listGroups(query: ScimQuery): Promise<ListResponse> {
    const filter = query.filter ? parseFilter(query.filter, 'Group') : undefined;
    const name = filter ? equalityOn(filter, 'displayName') : undefined;
    const [groups, shadows, userNames] = await Promise.all([
      name !== undefined
        ? this.client
            .listGroups({ name })
            .then(async (found) => (found.length > 0 ? found : this.client.listGroups()))
        : this.client.listGroups(),
      this.shadows.all(this.target, 'Group'),
      query.excludedAttributes?.toLowerCase().includes('members')
        ? Promise.resolve(new Map<number, string>())
        : this.userNames(),
    ]);
    const all = groups
      .filter((group) => group.id !== undefined)
      .sort((a, b) => a.id! - b.id!)
      .map((group) => groupResource(group, shadows.get(String(group.id)), userNames, this.base))
      .filter((resource) => !filter || matches(filter, resource));
    const page = listResponse(all, query.paging);
    page.Resources = page.Resources.map((resource) => project('Group', resource, query));
    return page;
  }

  protected async damUser(id: string): Promise<UserRecord> {
    // gathered with the reads arriving meanwhile (scim-read-gather.ts)
    const user = await userReadGatherer(this.client).read(damId('User', id));
    if (!user) throw notFound('User', id);
    return user;
  }

  protected async damGroup(id: string): Promise<GroupRecord> {
    const [group] = await this.client.listGroups({ id: damId('Group', id) });
    if (!group) throw notFound('Group', id);
    return group;
  }

  protected async userView(user: UserRecord): Promise<JsonObject> {
    const [shadow, groupNames] = await Promise.all([
      this.shadows.get(this.target, 'User', String(user.userId)),
      (user.groups ?? []).length > 0
        ? this.groupNames()
        : Promise.resolve(new Map<number, string>()),
    ]);
    return userResource(user, shadow, groupNames, this.base);
  }

  protected async groupView(group: GroupRecord): Promise<JsonObject> {
    const [shadow, userNames] = await Promise.all([
      this.shadows.get(this.target, 'Group', String(group.id)),
      (group.users ?? []).length > 0
        ? this.userNames()
        : Promise.resolve(new Map<number, string>()),
    ]);
    return groupResource(group, shadow, userNames, this.base);
  }

  async getUser(id: string, projection: Projection = {}): Promise<JsonObject> {
    return project('User', await this.userView(await this.damUser(id)), projection);
  }

  async getGroup(id: string, projection: Projection = {}): Promise<JsonObject> {
    return project('Group', await this.groupView(await this.damGroup(id)), projection);
  }

  /**
   * A resource's writes, one at a time in this process: a PUT, PATCH or DELETE reads the record
   * and then writes it whole, so two at once would lose one's change (an identity provider sends
   * a group's member changes as separate PATCHes). Across processes, If-Match is the guard.
   */
  protected serially<T>(kind: ResourceKind, id: string, work: () => Promise<T>): Promise<T> {
    const writes = resourceWrites.of(this.client, () => new KeyedSerial<string>());
    return writes.run(`${kind} ${id}`, work);
  }

  protected written(kind: ResourceKind, resource: JsonObject): ScimWritten {
    const meta = resource.meta as JsonObject;
    return { resource, version: String(meta.version), location: String(meta.location) };
  }
}
