/** groupManager: reading groups, and planning and applying group writes (spec 2.2, 4.2). */
import { z } from 'zod';
import { groupFields, groupRecordSchema } from '../admin/schemas.js';
import { Draft } from './draft.js';
import { alreadyExists, badRequest, notFound, unknownReference } from './errors.js';
import type { RequestParams } from './params.js';
import { groupRecord } from './records.js';
import type { SandboxStore } from './store.js';
import { makeGroup, type StoredGroup } from './stored.js';
import { parseRecord, requireName, unique, type WritePlanner } from './write.js';

type GroupOp =
  | { kind: 'create' | 'update'; group: StoredGroup; users: number[] }
  | { kind: 'delete'; id: number };

/** DELETE needs only `id` or `name`; like userId, id may come as a numeric string. */
const groupDeleteKeySchema = z.looseObject({
  id: z
    .union([
      groupFields.id,
      z
        .string()
        .regex(/^\s*\d+\s*$/)
        .transform(Number),
    ])
    .optional(),
  name: groupFields.name.optional(),
});

/** GET groupManager: by id, by name (both: both must match), or all groups, streamed. */
export function listGroups(store: SandboxStore, params: RequestParams): Iterable<unknown> {
  const id = params.integer('id');
  const name = params.string('name');
  if (id === undefined && name === undefined) return allGroups(store);
  const groupId = id ?? store.groupIdOf(name ?? '');
  const group = groupId === undefined ? undefined : store.getGroup(groupId);
  if (!group || (name !== undefined && group.name !== name)) return [];
  return [store.groupAnswer(group)];
}

function* allGroups(store: SandboxStore): Generator<unknown> {
  for (const group of store.allGroups()) yield store.groupAnswer(group);
}

/** Plans and applies the records of one PUT, POST or DELETE on groupManager. */
export function groupPlanner(store: SandboxStore): WritePlanner<GroupOp> {
  const draft = new Draft<number>({
    keyOf: (id) => store.getGroup(id)?.name,
    idOf: (name) => store.groupIdOf(name),
  });
  let nextGroupId = store.peekNextGroupId();

  function planDelete(raw: unknown): GroupOp {
    const key = parseRecord(groupDeleteKeySchema, raw);
    if (key.id !== undefined) {
      if (!draft.has(key.id)) throw notFound(`no group with id ${key.id}`);
      draft.remove(key.id);
      return { kind: 'delete', id: key.id };
    }
    if (key.name === undefined) throw badRequest('id or name is required to delete a group');
    const id = draft.idOf(key.name);
    if (id === undefined) throw notFound(`no group named "${key.name}"`);
    draft.remove(id);
    return { kind: 'delete', id };
  }

  function planWrite(raw: unknown, method: 'PUT' | 'POST'): GroupOp {
    const record = parseRecord(groupRecordSchema, raw);
    if (method === 'POST' && record.id !== undefined) {
      throw badRequest('id is not allowed when creating by POST; send updates by PUT');
    }
    const name = requireName(record.name, 'name');
    const holder = draft.idOf(name);
    let id: number;
    let kind: 'create' | 'update';
    if (record.id !== undefined) {
      id = record.id;
      kind = 'update';
      if (!draft.has(id)) throw notFound(`no group with id ${id}`);
      if (holder !== undefined && holder !== id) {
        throw alreadyExists(`group name "${name}" is taken by group ${holder}`);
      }
    } else {
      if (holder !== undefined) {
        throw alreadyExists(`a group named "${name}" already exists (id ${holder})`);
      }
      id = nextGroupId++;
      kind = 'create';
    }
    const users = unique(record.users ?? []);
    for (const userId of users) {
      if (!store.getUser(userId)) throw unknownReference(`user ${userId} does not exist`);
    }
    // `acls` is supplied by the service and ignored here; an update overwrites every other field.
    const group = makeGroup({
      id,
      name,
      description: record.description,
      hidden: record.hidden,
      ldapDn: record.ldapDn,
      priority: record.priority,
      editLevel: record.editLevel,
      viewLevel: record.viewLevel,
      loginText: record.loginText,
      loadingDockType: record.loadingDockType,
    });
    draft.put(id, name);
    return { kind, group, users };
  }

  return {
    plan: (raw, method) => (method === 'DELETE' ? planDelete(raw) : planWrite(raw, method)),
    apply(op) {
      if (op.kind === 'delete') {
        const removed = store.deleteGroup(op.id);
        if (!removed) throw new Error(`planned delete of missing group ${op.id}`);
        store.stats.applied.groups.deleted++;
        store.stats.applied.acls.deleted += removed.aclIds.length;
        // The answer shows the group as it was, its users emptied (spec 4.2).
        return groupRecord(removed.group, removed.aclIds, []);
      }
      store.putGroup(op.group, op.users);
      store.stats.applied.groups[op.kind === 'create' ? 'created' : 'updated']++;
      return store.groupAnswer(op.group);
    },
  };
}
