/**
 * Turns names in reference fields into ids: a user's `groups` (group names), a group's
 * `users` (usernames) and an ACL's `groupId` (a group name). Ids pass through untouched.
 */
import type { ResourceName } from '../admin/resources.js';
import type { DirectoryView } from './directory-view.js';

export class UnresolvedReferenceError extends Error {
  constructor(
    readonly field: string,
    readonly value: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnresolvedReferenceError';
  }
}

/** Returns a copy of the record with every reference an id, or throws UnresolvedReferenceError. */
export async function resolveReferences(
  resource: ResourceName,
  record: Record<string, unknown>,
  lookup: DirectoryView,
): Promise<Record<string, unknown>> {
  const resolved = { ...record };
  if (resource === 'users' && Array.isArray(record.groups)) {
    resolved.groups = await resolveList('groups', record.groups, async (name) => {
      const group = await lookup.group(name);
      return group?.id;
    });
  }
  if (resource === 'groups' && Array.isArray(record.users)) {
    resolved.users = await resolveList('users', record.users, async (name) => {
      const user = await lookup.user(name);
      return user?.userId;
    });
  }
  if (resource === 'acls' && typeof record.groupId === 'string') {
    const group = await lookup.group(record.groupId);
    if (group?.id === undefined) {
      throw new UnresolvedReferenceError(
        'groupId',
        record.groupId,
        `group "${record.groupId}" does not exist`,
      );
    }
    resolved.groupId = group.id;
  }
  return resolved;
}

async function resolveList(
  field: string,
  items: unknown[],
  find: (name: string) => Promise<number | undefined>,
): Promise<number[]> {
  const ids: number[] = [];
  for (const item of items) {
    if (typeof item === 'number') {
      ids.push(item);
      continue;
    }
    const name = String(item);
    const id = await find(name);
    if (id === undefined) {
      const what = field === 'groups' ? 'group' : 'user';
      throw new UnresolvedReferenceError(field, name, `${what} "${name}" does not exist`);
    }
    ids.push(id);
  }
  return [...new Set(ids)];
}
