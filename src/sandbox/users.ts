/** userManager: reading users, and planning and applying user writes (spec 2.3, 4.3). */
import { z } from 'zod';
import { emailProblem } from '../admin/email.js';
import { USER_TYPES, userFields, userRecordSchema } from '../admin/schemas.js';
import { Draft } from './draft.js';
import { alreadyExists, badRequest, notFound, unknownReference } from './errors.js';
import type { RequestParams } from './params.js';
import { userDeletedRecord, userWriteRecord } from './records.js';
import type { SandboxStore } from './store.js';
import {
  USER_PROFILE_FIELDS,
  USER_STATUSES,
  makeUser,
  type StoredUser,
  type UserProfileField,
} from './stored.js';
import { parseRecord, requireName, unique, type WritePlanner } from './write.js';

type UserOp =
  | {
      kind: 'create' | 'update';
      user: StoredUser;
      groups: number[];
      carried: readonly UserProfileField[];
    }
  | { kind: 'delete'; userId: number };

const USER_TYPE_SET: ReadonlySet<string> = new Set(USER_TYPES);

/** DELETE needs only a key; userId may be a number or a numeric string (spec 4.3). */
const userDeleteKeySchema = z.looseObject({
  userId: z
    .union([
      userFields.userId,
      z
        .string()
        .regex(/^\s*\d+\s*$/)
        .transform(Number),
    ])
    .optional(),
  username: userFields.username.optional(),
});

/** GET userManager: by userId, by username (both: both must match), or all users, streamed. */
export function listUsers(store: SandboxStore, params: RequestParams): Iterable<unknown> {
  const userId = params.integer('userId');
  const username = params.string('username');
  if (userId === undefined && username === undefined) return allUsers(store);
  const id = userId ?? store.userIdOf(username ?? '');
  const user = id === undefined ? undefined : store.getUser(id);
  if (!user || (username !== undefined && user.username !== username)) return [];
  return [store.userAnswer(user)];
}

function* allUsers(store: SandboxStore): Generator<unknown> {
  for (const user of store.allUsers()) yield store.userAnswer(user);
}

/** Plans and applies the records of one PUT, POST or DELETE on userManager. */
export function userPlanner(store: SandboxStore): WritePlanner<UserOp> {
  const draft = new Draft<number>({
    keyOf: (userId) => store.getUser(userId)?.username,
    idOf: (username) => store.userIdOf(username),
  });
  let nextUserId = store.peekNextUserId();

  function planDelete(raw: unknown): UserOp {
    const key = parseRecord(userDeleteKeySchema, raw);
    if (key.userId !== undefined) {
      if (!draft.has(key.userId)) throw notFound(`no user with userId ${key.userId}`);
      draft.remove(key.userId);
      return { kind: 'delete', userId: key.userId };
    }
    if (key.username === undefined)
      throw badRequest('userId or username is required to delete a user');
    const userId = draft.idOf(key.username);
    if (userId === undefined) throw notFound(`no user with username "${key.username}"`);
    draft.remove(userId);
    return { kind: 'delete', userId };
  }

  function planWrite(raw: unknown, method: 'PUT' | 'POST'): UserOp {
    const record = parseRecord(userRecordSchema, raw);
    if (method === 'POST' && record.userId !== undefined) {
      throw badRequest('userId is not allowed when creating by POST; send updates by PUT');
    }
    const username = requireName(record.username, 'username');
    const holder = draft.idOf(username);
    let userId: number;
    let kind: 'create' | 'update';
    if (record.userId !== undefined) {
      userId = record.userId;
      kind = 'update';
      if (!draft.has(userId)) throw notFound(`no user with userId ${userId}`);
      if (holder !== undefined && holder !== userId) {
        throw alreadyExists(`username "${username}" is taken by user ${holder}`);
      }
    } else {
      if (holder !== undefined) {
        throw alreadyExists(`a user with username "${username}" already exists (userId ${holder})`);
      }
      userId = nextUserId++;
      kind = 'create';
    }
    if (record.type != null && !USER_TYPE_SET.has(record.type)) {
      throw badRequest(`type must be one of ${USER_TYPES.map((t) => `"${t}"`).join(', ')}`);
    }
    if (record.status !== undefined && !USER_STATUSES.includes(record.status)) {
      throw badRequest(`status must be one of ${USER_STATUSES.map((s) => `"${s}"`).join(', ')}`);
    }
    const emailText = record.email ? emailProblem(record.email) : undefined;
    if (emailText !== undefined) {
      throw badRequest(
        `email ${JSON.stringify(record.email)} is not an email address: it ${emailText}`,
      );
    }
    const groups = unique(record.groups ?? []);
    for (const groupId of groups) {
      if (!store.getGroup(groupId)) throw unknownReference(`group ${groupId} does not exist`);
    }
    // An update overwrites: whatever the record does not carry goes back to its default.
    const user = makeUser(userId, username, record);
    const carried = USER_PROFILE_FIELDS.filter((field) => Object.hasOwn(raw as object, field));
    draft.put(userId, username);
    return { kind, user, groups, carried };
  }

  return {
    plan: (raw, method) => (method === 'DELETE' ? planDelete(raw) : planWrite(raw, method)),
    apply(op) {
      if (op.kind === 'delete') {
        const user = store.deleteUser(op.userId);
        store.stats.applied.users.deleted++;
        if (!user) throw new Error(`planned delete of missing user ${op.userId}`);
        return userDeletedRecord(user);
      }
      store.putUser(op.user, op.groups);
      store.stats.applied.users[op.kind === 'create' ? 'created' : 'updated']++;
      return userWriteRecord(op.user, store.groupsOfUser(op.user.userId), op.carried);
    },
  };
}
