/**
 * What of a record two instances can agree on: its fields without the instance's ids, with the
 * interface's known quirks taken out, and its references kept as ids of its own instance (the
 * comparison turns them into names). Plain functions.
 *
 * The quirks, none of which is a difference (src/admin/read-back.ts knows them):
 * - a user's `position` always reads back "", and `primaryGroup` is never returned;
 * - a group's `loadingDockType` out of range reads back 1 (the range taken is 0–3);
 * - an ACL's `workspaces` are filled by the server (and name workspaces of one instance);
 * - a group's `acls` lists ACL ids, which the ACL records themselves are compared for;
 * - a string field left out reads the same as "".
 */
import type { ResourceName } from '../admin/resources.js';
import {
  LOADING_DOCK_TYPE_FALLBACK,
  LOADING_DOCK_TYPE_RANGE,
  NEVER_READ_BACK,
} from '../admin/read-back.js';

/** Fields never compared, per resource: ids, and what the interface never reads back. */
export const IGNORED_FIELDS: { readonly [R in ResourceName]: ReadonlySet<string> } = {
  users: new Set(['userId', ...NEVER_READ_BACK.users]),
  groups: new Set(['id', 'acls']),
  acls: new Set(['id', 'workspaces']),
};

/** Fields whose lists are sets (order carries no meaning). */
const SET_FIELDS = new Set(['groups', 'users', 'revokedPermissions', 'forms']);

/** A record ready to store for comparison: references still as ids. */
export interface Comparable {
  /** The record's own id in its instance (to name it from elsewhere). */
  id: string;
  /** Natural key; for an ACL its name only (the group's name is added once names are known). */
  key: string;
  /** ACLs: the id of their group. */
  groupId?: string;
  fields: Record<string, unknown>;
}

/** The record without ids and quirks. */
export function comparable(resource: ResourceName, record: Record<string, unknown>): Comparable {
  const fields: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(record)) {
    if (IGNORED_FIELDS[resource].has(field)) continue;
    if (resource === 'acls' && field === 'groupId') continue;
    if (value === '' || value === undefined) continue;
    if (resource === 'groups' && field === 'loadingDockType' && typeof value === 'number') {
      const [min, max] = LOADING_DOCK_TYPE_RANGE;
      fields[field] = value >= min && value <= max ? value : LOADING_DOCK_TYPE_FALLBACK;
      continue;
    }
    fields[field] = SET_FIELDS.has(field) && Array.isArray(value) ? sortedSet(value) : value;
  }
  if (resource === 'users') {
    return { id: String(record.userId), key: String(record.username), fields };
  }
  if (resource === 'groups') return { id: String(record.id), key: String(record.name), fields };
  return {
    id: String(record.id),
    key: String(record.name),
    groupId: String(record.groupId),
    fields,
  };
}

function sortedSet(values: readonly unknown[]): unknown[] {
  return [...new Set(values.map((value) => (typeof value === 'number' ? value : String(value))))]
    .map(String)
    .sort();
}

/** The fields of a record whose references are ids: `groups` of a user, `users` of a group. */
export function referenceField(resource: ResourceName): 'groups' | 'users' | undefined {
  if (resource === 'users') return 'groups';
  if (resource === 'groups') return 'users';
  return undefined;
}

/** The key of an ACL: its group's name and its own name. */
export function aclDiffKey(groupName: string, aclName: string): string {
  return `${groupName} / ${aclName}`;
}

/** Deep equality of JSON values (object keys in any order). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((value, index) => sameJson(value, b[index]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => key in b && sameJson(a[key], b[key]));
  }
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
