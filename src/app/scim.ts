/**
 * The SCIM use cases of one target (docs/scim.md): reading, creating, replacing, patching and
 * deleting users and groups of the DAM, over the target's admin client (its rate cap and 429
 * back-off). The protocol (filters, PATCH, paging, schemas) is src/scim/; this is where it meets
 * the DAM. A user's SCIM `id` is its DAM userId, a group's its DAM id; `externalId` is kept in
 * the DAM record (anchor-placement.ts); `active: false` locks the user, it is never deleted.
 */
import type { AdminClient } from '../admin/client.js';
import type { GroupRecord, UserRecord } from '../admin/schemas.js';
import { PorterError } from '../errors/porter-error.js';
import type { Mapping } from '../ingest/mapping.js';
import { MappingEvaluator } from '../mapping/evaluator.js';
import { readMappingFile } from '../mapping/read-mapping-file.js';
import { readFile } from 'node:fs/promises';
import { guardUserChange } from '../plan/admin-guard.js';
import {
  groupAnchor,
  userAnchor,
  withGroupAnchor,
  withUserAnchor,
} from '../scim/anchor-placement.js';
import { isObject, type JsonObject } from '../scim/attribute-path.js';
import { canonicalResource } from '../scim/canonical.js';
import { groupResource, userResource } from '../scim/dam-views.js';
import { defaultScimUserMapping } from '../scim/default-mapping.js';
import { checkIfMatch } from '../scim/etag.js';
import { equalityOn, matches, parseFilter } from '../scim/filter.js';
import { listResponse, type ListResponse, type Paging } from '../scim/list-response.js';
import { applyPatch, readPatchOperations } from '../scim/patch.js';
import { project, type Projection } from '../scim/projection.js';
import type { ResourceKind } from '../scim/resource-schemas.js';
import { scimInvalid } from '../scim/scim-error.js';
import { ShadowStore } from '../scim/shadow-store.js';
import { KeyedSerial } from '../util/keyed-serial.js';
import type { PorterContext } from './context.js';
import {
  nameKey,
  nameTaken,
  userCreateGatherer,
  type GatherOptions,
  type UserCreateGatherer,
} from './scim-gather.js';
import { noteUserCount, userReadGatherer } from './scim-read-gather.js';
import { userUpdateGatherer, type UserUpdateGatherer } from './scim-update-gather.js';
import { ScimRemovalGuard } from './scim-hold.js';
import { ScimJournal } from './scim-journal.js';

/** Per admin client (per target, per process), the writes of each resource, one at a time. */
const resourceWrites = new WeakMap<AdminClient, KeyedSerial<string>>();

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

const GENERAL_USER = 'General User';

/** One evaluator per mapping, per process: the mapping is read once. */
const evaluators = new WeakMap<PorterContext, Promise<MappingEvaluator>>();

async function userEvaluator(context: PorterContext): Promise<MappingEvaluator> {
  let evaluator = evaluators.get(context);
  if (!evaluator) {
    evaluator = (async () => {
      const file = context.env.PORTER_SCIM_MAPPING_FILE;
      const mapping: Mapping = file
        ? await readMappingFile(file, JSON.parse(await readFile(file, 'utf8')) as unknown, 'users')
        : defaultScimUserMapping();
      return new MappingEvaluator(mapping, 'username');
    })();
    evaluators.set(context, evaluator);
  }
  return evaluator;
}

/** Stops the mapping's expression thread, if one was started. */
export async function closeScim(context: PorterContext): Promise<void> {
  const evaluator = evaluators.get(context);
  evaluators.delete(context);
  if (evaluator) await (await evaluator).close();
}

function notFound(kind: ResourceKind, id: string): PorterError {
  return new PorterError('PORTER_NOT_FOUND', `no ${kind} with id "${id}" on this target`);
}

function damId(kind: ResourceKind, id: string): number {
  if (!/^\d{1,15}$/.test(id)) throw notFound(kind, id);
  return Number(id);
}

export class ScimTarget {
  private readonly shadows: ShadowStore;
  private readonly removals: ScimRemovalGuard;
  private readonly groupRemovals: ScimRemovalGuard;
  private readonly journal: ScimJournal;
  private readonly groupJournal: ScimJournal;

  /** `base`: the target's SCIM URL, for `location` and `$ref`. */
  constructor(
    private readonly context: PorterContext,
    private readonly target: string,
    private readonly client: AdminClient,
    private readonly base: string,
  ) {
    this.shadows = new ShadowStore(context.redis, context.env.PORTER_PREFIX);
    this.removals = new ScimRemovalGuard(context, target);
    this.groupRemovals = new ScimRemovalGuard(context, target, 'groups');
    this.journal = new ScimJournal(context, target);
    this.groupJournal = new ScimJournal(context, target, 'groups');
  }

  // ---- reads ----

  private async users(filter?: string): Promise<UserRecord[]> {
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
  private async allUsers(): Promise<UserRecord[]> {
    const users = await this.client.listUsers();
    noteUserCount(this.client, users.length);
    return users;
  }

  private async groupNames(): Promise<Map<number, string>> {
    const groups = await this.client.listGroups();
    return new Map(groups.map((group) => [group.id!, group.name ?? '']));
  }

  private async userNames(): Promise<Map<number, string>> {
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

  private async damUser(id: string): Promise<UserRecord> {
    // gathered with the reads arriving meanwhile (scim-read-gather.ts)
    const user = await userReadGatherer(this.client).read(damId('User', id));
    if (!user) throw notFound('User', id);
    return user;
  }

  private async damGroup(id: string): Promise<GroupRecord> {
    const [group] = await this.client.listGroups({ id: damId('Group', id) });
    if (!group) throw notFound('Group', id);
    return group;
  }

  private async userView(user: UserRecord): Promise<JsonObject> {
    const [shadow, groupNames] = await Promise.all([
      this.shadows.get(this.target, 'User', String(user.userId)),
      (user.groups ?? []).length > 0
        ? this.groupNames()
        : Promise.resolve(new Map<number, string>()),
    ]);
    return userResource(user, shadow, groupNames, this.base);
  }

  private async groupView(group: GroupRecord): Promise<JsonObject> {
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

  // ---- users ----

  /** The target's gatherer of user creates (scim-gather.ts). */
  /**
   * A resource's writes, one at a time in this process: a PUT, PATCH or DELETE reads the record
   * and then writes it whole, so two at once would lose one's change (an identity provider sends
   * a group's member changes as separate PATCHes). Across processes, If-Match is the guard.
   */
  private serially<T>(kind: ResourceKind, id: string, work: () => Promise<T>): Promise<T> {
    let writes = resourceWrites.get(this.client);
    if (!writes) {
      writes = new KeyedSerial<string>();
      resourceWrites.set(this.client, writes);
    }
    return writes.run(`${kind} ${id}`, work);
  }

  private gathering(): GatherOptions {
    return {
      windowMs: this.context.env.PORTER_SCIM_WINDOW_MS,
      maxBatch: this.context.env.PORTER_SCIM_MAX_BATCH,
    };
  }

  private creates(): UserCreateGatherer {
    return userCreateGatherer(this.client, this.gathering());
  }

  private updates(): UserUpdateGatherer {
    return userUpdateGatherer(this.client, this.gathering());
  }

  /** The DAM fields the mapping gives for a SCIM user; PORTER_SCIM_INVALID when it fails. */
  private async mapUser(resource: JsonObject): Promise<Record<string, unknown>> {
    const evaluator = await userEvaluator(this.context);
    const outcome = await evaluator.evaluate(resource, 1);
    if (outcome.kind === 'failed') {
      throw scimInvalid(
        'invalidValue',
        `the mapping of ${outcome.field} failed: ${outcome.message}`,
      );
    }
    if (outcome.kind === 'skip')
      throw scimInvalid('invalidValue', `the mapping skips this user: ${outcome.reason}`);
    return outcome.values;
  }

  private requireUserName(resource: JsonObject): string {
    const name = resource.userName;
    if (typeof name !== 'string' || name.trim() === '') {
      throw scimInvalid('invalidValue', 'userName is required');
    }
    return name;
  }

  /** PORTER_SCIM_UNIQUENESS when another user holds the name or a look-alike of it. */
  private async checkUserNameFree(name: string, self?: number): Promise<void> {
    const users = await this.client.listUsers();
    const key = nameKey(name);
    const holder = users.find((user) => user.userId !== self && nameKey(user.username) === key);
    if (holder) throw nameTaken(name, `user ${holder.userId} ("${holder.username}")`);
  }

  private written(kind: ResourceKind, resource: JsonObject): ScimWritten {
    const meta = resource.meta as JsonObject;
    return { resource, version: String(meta.version), location: String(meta.location) };
  }

  /**
   * Creates a user: gathered with the creates arriving meanwhile into one call (scim-gather.ts,
   * which checks the name), and answered from the record sent and the one the server returned.
   */
  async createUser(body: unknown): Promise<ScimWritten> {
    const resource = canonicalResource('User', body, { writable: true });
    const name = this.requireUserName(resource);
    const fields = await this.mapUser(resource);
    const anchor = typeof resource.externalId === 'string' ? resource.externalId : undefined;
    const record = {
      ...fields,
      username: name,
      type: GENERAL_USER,
      ...(anchor !== undefined ? { substitutionMap: withUserAnchor({}, anchor) } : {}),
    } as UserRecord;
    const created = await this.creates().create(record);
    const userId = String(created.userId);
    // what the server holds: the fields sent, as it returned them (a new user is in no group)
    const held = { ...record, ...created } as UserRecord;
    // the journal keeps the changes of one moment in one go: asked before anything is awaited
    const [shadow] = await Promise.all([
      this.shadows.put(this.target, 'User', userId, resource),
      this.journal.record({ action: 'create', id: created.userId!, key: name, written: held }),
    ]);
    return this.written('User', userResource(held, shadow, new Map(), this.base));
  }

  /** Writes `resource` over the DAM user: the PUT of SCIM, and the end of a PATCH. */
  private async writeUser(current: UserRecord, resource: JsonObject): Promise<ScimWritten> {
    const name = this.requireUserName(resource);
    if (current.username !== name) await this.checkUserNameFree(name, current.userId);
    const fields = await this.mapUser(resource);
    // a mapping that computes the DAM type never changes a user's type through SCIM: no
    // promotion to an administrator, no demotion of one (the imports' admin guard)
    const verdict = guardUserChange('update', fields, current, false);
    if (!verdict.allowed) {
      throw new PorterError(
        'PORTER_ADMIN_GUARD',
        `user ${current.userId} ("${current.username}"): the SCIM mapping ${verdict.reason!.replace(/; start the import.*$/, '')}; SCIM never changes a user's type`,
      );
    }
    const evaluator = await userEvaluator(this.context);
    // a PUT of the admin interface overwrites: the DAM fields the mapping does not compute
    // are carried over, those it computes but gave nothing for are cleared
    const record: Record<string, unknown> = { ...current };
    for (const field of evaluator.computed)
      record[field] = typeof current[field as keyof UserRecord] === 'string' ? '' : undefined;
    Object.assign(record, fields, { userId: current.userId, username: name });
    const anchor =
      typeof resource.externalId === 'string' ? resource.externalId : userAnchor(current);
    record.substitutionMap = withUserAnchor(
      current.substitutionMap as Record<string, unknown> | undefined,
      anchor,
    );
    if (
      record.status === 'Locked' &&
      current.status !== 'Locked' &&
      (current.type ?? GENERAL_USER) !== GENERAL_USER
    ) {
      throw new PorterError(
        'PORTER_ADMIN_GUARD',
        `user ${current.userId} ("${current.username}") is a ${current.type}: SCIM never deactivates one`,
      );
    }
    for (const key of Object.keys(record)) if (record[key] === undefined) delete record[key];
    const change = {
      id: current.userId!,
      key: name,
      before: current,
      written: record as UserRecord & { userId: number },
    };
    const removal = { kind: 'lock' as const, id: current.userId!, name: current.username ?? name };
    if (record.status === 'Locked' && current.status !== 'Locked') {
      // a deactivation: within the target's hourly budget, else held (scim-hold.ts)
      const outcome = await this.removals.guard(removal, () =>
        this.updates().update(change.written),
      );
      if (!outcome.applied) return this.written('User', await this.userView(current));
      await this.journal.record({ ...change, action: 'lock' });
    } else if (
      record.status === 'Locked' &&
      (await this.removals.released(current.userId!, 'lock'))
    ) {
      // the provider's retry of a deactivation released from a hold: answered as it is now
      return this.written('User', await this.userView(current));
    } else {
      // gathered with the updates arriving meanwhile; answered from the record sent and the
      // one the server returned, as a create is
      const updated = await this.updates().update(
        change.written as UserRecord & { userId: number },
      );
      // the old name is free again for a create
      if (current.username !== name) this.creates().forgetNames();
      const [shadow] = await Promise.all([
        this.shadows.put(this.target, 'User', String(current.userId), resource),
        this.journal.record({ ...change, action: 'update' }),
      ]);
      const groupNames =
        (updated.groups ?? []).length > 0 ? await this.groupNames() : new Map<number, string>();
      return this.written('User', userResource(updated, shadow, groupNames, this.base));
    }
    await this.shadows.put(this.target, 'User', String(current.userId), resource);
    return this.written('User', await this.userView(await this.damUser(String(current.userId))));
  }

  replaceUser(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    return this.serially('User', id, () => this.replaceUserNow(id, body, ifMatch));
  }

  private async replaceUserNow(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    const current = await this.damUser(id);
    checkIfMatch(ifMatch, String(((await this.userView(current)).meta as JsonObject).version));
    return this.writeUser(current, canonicalResource('User', body, { writable: true }));
  }

  patchUser(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    return this.serially('User', id, () => this.patchUserNow(id, body, ifMatch));
  }

  private async patchUserNow(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    const operations = readPatchOperations(body);
    const current = await this.damUser(id);
    const view = await this.userView(current);
    checkIfMatch(ifMatch, String((view.meta as JsonObject).version));
    const patched = applyPatch('User', view, operations);
    return this.writeUser(current, canonicalResource('User', patched, { writable: true }));
  }

  deleteUser(id: string, ifMatch?: string): Promise<void> {
    return this.serially('User', id, () => this.deleteUserNow(id, ifMatch));
  }

  private async deleteUserNow(id: string, ifMatch?: string): Promise<void> {
    let current: UserRecord;
    try {
      current = await this.damUser(id);
    } catch (error) {
      // the provider's retry of a delete released from a hold: done
      if (/^\d{1,15}$/.test(id) && (await this.removals.released(Number(id), 'delete'))) return;
      throw error;
    }
    if (ifMatch !== undefined)
      checkIfMatch(ifMatch, String(((await this.userView(current)).meta as JsonObject).version));
    if ((current.type ?? GENERAL_USER) !== GENERAL_USER) {
      throw new PorterError(
        'PORTER_ADMIN_GUARD',
        `user ${current.userId} ("${current.username}") is a ${current.type}: SCIM never deletes one`,
      );
    }
    // within the target's hourly budget of deletes, else held (scim-hold.ts)
    await this.removals.guard(
      { kind: 'delete', id: current.userId!, name: current.username ?? '' },
      async () => {
        await this.client.deleteUsers([{ userId: current.userId! }]);
        this.creates().forgetNames();
        await this.shadows.remove(this.target, 'User', id);
        await this.journal.record({
          action: 'delete',
          id: current.userId!,
          key: current.username ?? '',
          before: current,
        });
      },
    );
  }

  // ---- groups ----

  private requireDisplayName(resource: JsonObject): string {
    const name = resource.displayName;
    if (typeof name !== 'string' || name.trim() === '')
      throw scimInvalid('invalidValue', 'displayName is required');
    return name;
  }

  private async checkGroupNameFree(name: string, self?: number): Promise<void> {
    const key = nameKey(name);
    const holder = (await this.client.listGroups()).find(
      (group) => group.id !== self && nameKey(group.name) === key,
    );
    if (holder) {
      throw new PorterError(
        'PORTER_SCIM_UNIQUENESS',
        `displayName "${name}" is taken by group ${holder.id}`,
      );
    }
  }

  /** The DAM user ids of a group's members; each must be a user of the target. */
  private async memberIds(resource: JsonObject): Promise<number[]> {
    const members = Array.isArray(resource.members) ? resource.members : [];
    const values = members.map((member) => (isObject(member) ? member.value : member));
    if (values.length === 0) return [];
    const known = new Set((await this.client.listUsers()).map((user) => user.userId));
    const ids = new Set<number>();
    for (const value of values) {
      const text = typeof value === 'string' ? value : String(value);
      const id = /^\d{1,15}$/.test(text) ? Number(text) : undefined;
      if (id === undefined || !known.has(id)) {
        throw scimInvalid(
          'invalidValue',
          `members: "${text}" is not the id of a user of this target`,
        );
      }
      ids.add(id);
    }
    return [...ids];
  }

  async createGroup(body: unknown): Promise<ScimWritten> {
    const resource = canonicalResource('Group', body, { writable: true });
    const name = this.requireDisplayName(resource);
    await this.checkGroupNameFree(name);
    const users = await this.memberIds(resource);
    const anchor = typeof resource.externalId === 'string' ? resource.externalId : undefined;
    const record: GroupRecord = {
      name,
      users,
      ...(anchor !== undefined ? { description: withGroupAnchor('', anchor) } : {}),
    };
    const [created] = await this.client.postGroups([record]);
    if (created?.id === undefined)
      throw new PorterError('PORTER_CONFLICT', `the DAM did not create "${name}"`);
    await Promise.all([
      this.shadows.put(this.target, 'Group', String(created.id), resource),
      this.groupJournal.record({
        action: 'create',
        id: created.id,
        key: name,
        written: { ...record, ...created },
      }),
    ]);
    return this.written('Group', await this.groupView(await this.damGroup(String(created.id))));
  }

  private async writeGroup(current: GroupRecord, resource: JsonObject): Promise<ScimWritten> {
    const name = this.requireDisplayName(resource);
    if (current.name !== name) await this.checkGroupNameFree(name, current.id);
    const users = await this.memberIds(resource);
    const anchor =
      typeof resource.externalId === 'string' ? resource.externalId : groupAnchor(current);
    // the group's users array replaces its members in one call, however many they are
    const written = {
      ...current,
      name,
      users,
      description: withGroupAnchor(current.description, anchor),
    };
    await this.client.putGroups([written]);
    await Promise.all([
      this.shadows.put(this.target, 'Group', String(current.id), resource),
      this.groupJournal.record({
        action: 'update',
        id: current.id!,
        key: name,
        before: current,
        written,
      }),
    ]);
    return this.written('Group', await this.groupView(await this.damGroup(String(current.id))));
  }

  replaceGroup(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    return this.serially('Group', id, () => this.replaceGroupNow(id, body, ifMatch));
  }

  private async replaceGroupNow(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    const current = await this.damGroup(id);
    if (ifMatch !== undefined)
      checkIfMatch(ifMatch, String(((await this.groupView(current)).meta as JsonObject).version));
    return this.writeGroup(current, canonicalResource('Group', body, { writable: true }));
  }

  patchGroup(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    return this.serially('Group', id, () => this.patchGroupNow(id, body, ifMatch));
  }

  private async patchGroupNow(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    const operations = readPatchOperations(body);
    const current = await this.damGroup(id);
    const view = await this.groupView(current);
    checkIfMatch(ifMatch, String((view.meta as JsonObject).version));
    const patched = applyPatch('Group', view, operations);
    return this.writeGroup(current, canonicalResource('Group', patched, { writable: true }));
  }

  deleteGroup(id: string, ifMatch?: string): Promise<void> {
    return this.serially('Group', id, () => this.deleteGroupNow(id, ifMatch));
  }

  private async deleteGroupNow(id: string, ifMatch?: string): Promise<void> {
    let current: GroupRecord;
    try {
      current = await this.damGroup(id);
    } catch (error) {
      // the provider's retry of a delete released from a hold: done
      if (/^\d{1,15}$/.test(id) && (await this.groupRemovals.released(Number(id), 'delete')))
        return;
      throw error;
    }
    if (ifMatch !== undefined)
      checkIfMatch(ifMatch, String(((await this.groupView(current)).meta as JsonObject).version));
    // within the target's hourly budget of deletes, else held (scim-hold.ts)
    await this.groupRemovals.guard(
      { kind: 'delete', id: current.id!, name: current.name ?? '' },
      async () => {
        await this.client.deleteGroups([{ id: current.id! }]);
        await Promise.all([
          this.shadows.remove(this.target, 'Group', id),
          this.groupJournal.record({
            action: 'delete',
            id: current.id!,
            key: current.name ?? '',
            before: current,
          }),
        ]);
      },
    );
  }
}
