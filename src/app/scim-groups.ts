/**
 * The SCIM writes of a target's groups (docs/scim.md): create, replace, patch and delete. A
 * group's `displayName` is the DAM group's name and its `members` the group's `users`, which
 * replace its members in one call however many they are; a delete is within the target's hourly
 * budget of deletes, else held (scim-hold.ts); each change is kept in the hour's journal of
 * groups (scim-journal.ts).
 */
import type { AdminClient } from '../admin/client.js';
import type { GroupRecord } from '../admin/schemas.js';
import { PorterError } from '../errors/porter-error.js';
import { groupAnchor, withGroupAnchor } from '../scim/anchor-placement.js';
import { isObject, type JsonObject } from '../scim/attribute-path.js';
import { canonicalResource } from '../scim/canonical.js';
import { checkIfMatch } from '../scim/etag.js';
import { applyPatch, readPatchOperations } from '../scim/patch.js';
import { scimInvalid } from '../scim/scim-error.js';
import type { PorterContext } from './context.js';
import { nameKey } from './scim-gather.js';
import { ScimRemovalGuard } from './scim-hold.js';
import { ScimJournal } from './scim-journal.js';
import { ScimTargetBase, type ScimWritten } from './scim-target-base.js';

export class ScimGroupWrites extends ScimTargetBase {
  private readonly groupRemovals: ScimRemovalGuard;
  private readonly groupJournal: ScimJournal;

  constructor(context: PorterContext, target: string, client: AdminClient, base: string) {
    super(context, target, client, base);
    this.groupRemovals = new ScimRemovalGuard(context, target, 'groups');
    this.groupJournal = new ScimJournal(context, target, 'groups');
  }

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
