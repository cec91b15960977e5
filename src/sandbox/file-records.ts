/**
 * Records as the data file and its journal carry them: a user with its `groups`, a group
 * (with its `users` when a change set them), an ACL; and their checked reading back, which
 * drops references to records that are not there (a hand-edited file) rather than leave
 * them dangling.
 */
import { aclRecordSchema, groupRecordSchema, userRecordSchema } from '../admin/schemas.js';
import type { SandboxStore } from './store.js';
import {
  makeAcl,
  makeGroup,
  makeUser,
  type StoredAcl,
  type StoredGroup,
  type StoredUser,
} from './stored.js';

/** A user as written: the stored fields, plus `groups` when the change set them. */
export function userText(user: StoredUser, groups: readonly number[] | undefined): string {
  return JSON.stringify(groups === undefined ? user : { ...user, groups });
}

/** A group as written: the stored fields, plus `users` when the change set them. */
export function groupText(group: StoredGroup, users: readonly number[] | undefined): string {
  return JSON.stringify(users === undefined ? group : { ...group, users });
}

/** A user read back, its groups limited to those in the store; groups undefined when not carried. */
export function readUser(
  value: unknown,
  store: SandboxStore,
): { user: StoredUser; groups: number[] | undefined } {
  const record = checked(userRecordSchema, value, ['userId', 'username']);
  const groups = record.groups?.filter((groupId) => store.getGroup(groupId));
  return { user: makeUser(record.userId as number, record.username as string, record), groups };
}

/** A group read back, its users limited to those in the store; users undefined when not carried. */
export function readGroup(
  value: unknown,
  store: SandboxStore,
): { group: StoredGroup; users: number[] | undefined } {
  const record = checked(groupRecordSchema, value, ['id', 'name']);
  const users = record.users?.filter((userId) => store.getUser(userId));
  return { group: makeGroup(record as Parameters<typeof makeGroup>[0]), users };
}

/** An ACL read back; undefined when its group is not in the store. */
export function readAcl(value: unknown, store: SandboxStore): StoredAcl | undefined {
  const record = checked(aclRecordSchema, value, ['id', 'name', 'groupId', 'workspaces']);
  if (!store.getGroup(record.groupId as number)) return undefined;
  return makeAcl(record as Parameters<typeof makeAcl>[0]);
}

/** A group's member list read back, limited to the group's members that are in the store. */
export function readMembers(value: unknown, store: SandboxStore): { id: number; users: number[] } {
  const record = (value ?? {}) as { id?: unknown; users?: unknown };
  const id = readId(record.id, 'members.id');
  if (!Array.isArray(record.users)) throw new Error('members without a "users" array');
  const users = record.users.map((userId) => readId(userId, 'members.users'));
  return { id, users: users.filter((userId) => store.getUser(userId)) };
}

/** A whole-number id, as a delete in the journal names it. */
export function readId(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new Error(`${what} must be a whole number, got ${JSON.stringify(value)}`);
  }
  return value;
}

function checked<T extends Record<string, unknown>>(
  schema: {
    safeParse(value: unknown): { success: true; data: T } | { success: false; error: Error };
  },
  value: unknown,
  required: readonly string[],
): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new Error(result.error.message);
  for (const field of required) {
    if (result.data[field] === undefined) throw new Error(`record without ${field}`);
  }
  return result.data;
}
