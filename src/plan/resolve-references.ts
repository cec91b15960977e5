/**
 * Turns references into ids: a user's `groups` (groups), a group's `users` (users) and an ACL's
 * `groupId` (a group). How a reference is read is decided in reference-rule.ts.
 */
import type { ResourceName } from '../admin/resources.js';
import type { ErrorCode } from '../errors/codes.js';
import { NOT_READ, type DirectoryView, type ReadAheadView } from './directory-view.js';
import {
  decideReference,
  referenceLookups,
  type FoundRecord,
  type ReferenceKind,
} from './reference-rule.js';

/** A reference that names no record, or names two. */
export class UnresolvedReferenceError extends Error {
  constructor(
    readonly field: string,
    readonly value: string,
    message: string,
    readonly code: Extract<
      ErrorCode,
      'PORTER_GROUP_UNRESOLVED' | 'PORTER_GROUP_AMBIGUOUS'
    > = 'PORTER_GROUP_UNRESOLVED',
  ) {
    super(message);
    this.name = 'UnresolvedReferenceError';
  }
}

/** Finds one kind of record by name and by id. */
interface Finder {
  kind: ReferenceKind;
  byName(name: string): Promise<FoundRecord | undefined>;
  byId(id: number): Promise<FoundRecord | undefined>;
}

function groupFinder(lookup: DirectoryView): Finder {
  const found = (group: { id?: number; name?: string } | undefined): FoundRecord | undefined =>
    group?.id === undefined ? undefined : { id: group.id, name: group.name ?? '' };
  return {
    kind: 'group',
    byName: async (name) => found(await lookup.group(name)),
    byId: async (id) => found(await lookup.groupById(id)),
  };
}

function userFinder(lookup: DirectoryView): Finder {
  const found = (user: { userId?: number; username?: string } | undefined) =>
    user?.userId === undefined ? undefined : { id: user.userId, name: user.username ?? '' };
  return {
    kind: 'user',
    byName: async (name) => found(await lookup.user(name)),
    byId: async (id) => found(await lookup.userById(id)),
  };
}

/** Returns a copy of the record with every reference an id, or throws UnresolvedReferenceError. */
export async function resolveReferences(
  resource: ResourceName,
  record: Record<string, unknown>,
  lookup: DirectoryView,
): Promise<Record<string, unknown>> {
  const resolved = { ...record };
  if (resource === 'users' && Array.isArray(record.groups)) {
    resolved.groups = await resolveList('groups', record.groups, groupFinder(lookup));
  }
  if (resource === 'groups' && Array.isArray(record.users)) {
    resolved.users = await resolveList('users', record.users, userFinder(lookup));
  }
  if (resource === 'acls' && isReference(record.groupId)) {
    resolved.groupId = await resolveOne('groupId', record.groupId, groupFinder(lookup));
  }
  return resolved;
}

function isReference(value: unknown): value is string | number {
  return typeof value === 'string' || typeof value === 'number';
}

async function resolveOne(
  field: string,
  reference: string | number,
  find: Finder,
): Promise<number> {
  const wanted = referenceLookups(reference);
  const byName = wanted.name === undefined ? undefined : await find.byName(wanted.name);
  // a bare number is read by id only when a record has it as its name: then it may be both
  const byId =
    byName !== undefined && wanted.id !== undefined ? await find.byId(wanted.id) : undefined;
  return referenceId(field, find.kind, reference, byName, byId);
}

/** The id a reference decides on, from what was found; throws when it decides on none. */
function referenceId(
  field: string,
  kind: ReferenceKind,
  reference: string | number,
  byName: FoundRecord | undefined,
  byId: FoundRecord | undefined,
): number {
  const decision = decideReference(kind, reference, byName, byId);
  if (decision.kind === 'resolved') return decision.id;
  throw new UnresolvedReferenceError(
    field,
    String(reference),
    decision.message,
    decision.kind === 'ambiguous' ? 'PORTER_GROUP_AMBIGUOUS' : 'PORTER_GROUP_UNRESOLVED',
  );
}

async function resolveList(field: string, items: unknown[], find: Finder): Promise<number[]> {
  const ids: number[] = [];
  for (const item of items) {
    ids.push(await resolveOne(field, isReference(item) ? item : String(item), find));
  }
  return [...new Set(ids)];
}

/**
 * resolveReferences from what a view read ahead: the record with every reference an id, or
 * NOT_READ when a reference needs a lookup the view did not make (then resolveReferences asks).
 */
export function resolveReferencesNow(
  resource: ResourceName,
  record: Record<string, unknown>,
  view: ReadAheadView,
): Record<string, unknown> | typeof NOT_READ {
  const resolved = { ...record };
  if (resource === 'users' && Array.isArray(record.groups)) {
    const ids = resolveListNow('groups', record.groups, 'group', view);
    if (ids === NOT_READ) return NOT_READ;
    resolved.groups = ids;
  }
  if (resource === 'groups' && Array.isArray(record.users)) {
    const ids = resolveListNow('users', record.users, 'user', view);
    if (ids === NOT_READ) return NOT_READ;
    resolved.users = ids;
  }
  if (resource === 'acls' && isReference(record.groupId)) return NOT_READ;
  return resolved;
}

function resolveListNow(
  field: string,
  items: unknown[],
  kind: ReferenceKind,
  view: ReadAheadView,
): number[] | typeof NOT_READ {
  const ids: number[] = [];
  for (const item of items) {
    const reference = isReference(item) ? item : String(item);
    const wanted = referenceLookups(reference);
    const byName = wanted.name === undefined ? undefined : foundNow(kind, view, wanted.name);
    if (byName === NOT_READ) return NOT_READ;
    const byId =
      byName !== undefined && wanted.id !== undefined ? foundNow(kind, view, wanted.id) : undefined;
    if (byId === NOT_READ) return NOT_READ;
    ids.push(referenceId(field, kind, reference, byName, byId));
  }
  return [...new Set(ids)];
}

/** The group or user a view read ahead, by name or id, as a reference finds it. */
function foundNow(
  kind: ReferenceKind,
  view: ReadAheadView,
  wanted: string | number,
): FoundRecord | undefined | typeof NOT_READ {
  if (kind === 'group') {
    const group = typeof wanted === 'number' ? view.groupById(wanted) : view.group(wanted);
    if (group === NOT_READ) return NOT_READ;
    return group?.id === undefined ? undefined : { id: group.id, name: group.name ?? '' };
  }
  const user = typeof wanted === 'number' ? view.userById(wanted) : view.user(wanted);
  if (user === NOT_READ) return NOT_READ;
  return user?.userId === undefined ? undefined : { id: user.userId, name: user.username ?? '' };
}
