/**
 * The sandbox's state: users, groups and ACLs in maps keyed by id, with O(1) indexes
 * by username, group name and (group, ACL name), and the membership relation.
 * Writes here do not validate: the planners have checked every record before it gets here.
 */
import type { AclRecord, GroupRecord, UserRecord } from '../admin/schemas.js';
import { Membership } from './membership.js';
import { aclRecord, groupRecord, userRecord } from './records.js';
import { emptyStats, type SandboxStats } from './stats.js';
import type { StoredAcl, StoredGroup, StoredUser } from './stored.js';

/**
 * One change as the store's write methods make it, in their own terms, so that calling the
 * same methods with the same changes in the same order rebuilds the same state (the journal).
 */
export type StoreChange =
  | { kind: 'putUser'; user: StoredUser; groupIds?: readonly number[] }
  | { kind: 'deleteUser'; userId: number }
  | { kind: 'putGroup'; group: StoredGroup; userIds?: readonly number[] }
  | { kind: 'deleteGroup'; id: number }
  | { kind: 'putAcl'; acl: StoredAcl };

/**
 * A consistent picture of the whole state, taken synchronously (records are immutable).
 * Call `release()` when done with it.
 */
export interface StoreSnapshot {
  nextUserId: number;
  nextGroupId: number;
  users: StoredUser[];
  groups: StoredGroup[];
  acls: StoredAcl[];
  /** A user's group ids as they were when the snapshot was taken. */
  groupsOf(userId: number): readonly number[];
  /** Group id → member ids, in the group's own order (which may differ from user-id order). */
  members: Map<number, readonly number[]>;
  /** Stops keeping the picture of the memberships. */
  release(): void;
}

/** The unique key of an ACL: its name within its group. */
export const aclKey = (groupId: number, name: string): string => `${groupId}\u0000${name}`;

/** Users, groups and ACLs with their indexes, the membership relation and the counters. */
export class SandboxStore {
  readonly stats: SandboxStats = emptyStats();
  /** Bumped on every change. */
  version = 0;

  private readonly usersById = new Map<number, StoredUser>();
  private readonly userIdsByName = new Map<string, number>();
  private readonly groupsById = new Map<number, StoredGroup>();
  private readonly groupIdsByName = new Map<string, number>();
  private readonly aclsById = new Map<string, StoredAcl>();
  /** Group id → its ACL ids, in creation order. */
  private readonly aclIdsByGroup = new Map<number, Set<string>>();
  private readonly aclIdsByKey = new Map<string, string>();
  private readonly membership = new Membership();
  private nextUser = 1;
  private nextGroup = 1;
  private observer: ((change: StoreChange) => void) | undefined;

  // ---- reads in GET shape, for tests and tools ----

  /** Every user as GET shows it, in id order. */
  users(): UserRecord[] {
    return Array.from(this.usersById.values(), (user) => this.userAnswer(user));
  }
  user(userId: number): UserRecord | undefined {
    const user = this.usersById.get(userId);
    return user && this.userAnswer(user);
  }
  userByName(username: string): UserRecord | undefined {
    const userId = this.userIdsByName.get(username);
    return userId === undefined ? undefined : this.user(userId);
  }
  groups(): GroupRecord[] {
    return Array.from(this.groupsById.values(), (group) => this.groupAnswer(group));
  }
  group(id: number): GroupRecord | undefined {
    const group = this.groupsById.get(id);
    return group && this.groupAnswer(group);
  }
  groupByName(name: string): GroupRecord | undefined {
    const id = this.groupIdsByName.get(name);
    return id === undefined ? undefined : this.group(id);
  }
  acls(): AclRecord[] {
    return Array.from(this.aclsById.values(), aclRecord);
  }
  acl(id: string): AclRecord | undefined {
    const acl = this.aclsById.get(id);
    return acl && aclRecord(acl);
  }
  counts(): { users: number; groups: number; acls: number } {
    return { users: this.usersById.size, groups: this.groupsById.size, acls: this.aclsById.size };
  }
  /** Sets every counter back to zero. */
  resetStats(): void {
    Object.assign(this.stats, emptyStats());
  }

  // ---- raw reads, for handlers ----

  getUser(userId: number): StoredUser | undefined {
    return this.usersById.get(userId);
  }
  userIdOf(username: string): number | undefined {
    return this.userIdsByName.get(username);
  }
  allUsers(): IterableIterator<StoredUser> {
    return this.usersById.values();
  }
  getGroup(id: number): StoredGroup | undefined {
    return this.groupsById.get(id);
  }
  groupIdOf(name: string): number | undefined {
    return this.groupIdsByName.get(name);
  }
  allGroups(): IterableIterator<StoredGroup> {
    return this.groupsById.values();
  }
  getAcl(id: string): StoredAcl | undefined {
    return this.aclsById.get(id);
  }
  /** ACL id by its key (see aclKey). */
  aclIdOfKey(key: string): string | undefined {
    return this.aclIdsByKey.get(key);
  }
  allAcls(): IterableIterator<StoredAcl> {
    return this.aclsById.values();
  }
  aclIdsOf(groupId: number): string[] {
    const ids = this.aclIdsByGroup.get(groupId);
    return ids ? [...ids] : [];
  }
  groupsOfUser(userId: number): readonly number[] {
    return this.membership.groupsOf(userId);
  }
  usersOfGroup(groupId: number): number[] {
    return this.membership.usersOf(groupId);
  }
  userAnswer(user: StoredUser): UserRecord {
    return userRecord(user, this.membership.groupsOf(user.userId));
  }
  groupAnswer(group: StoredGroup): GroupRecord {
    return groupRecord(group, this.aclIdsOf(group.id), this.membership.usersOf(group.id));
  }
  /** The id the next created user will get. */
  peekNextUserId(): number {
    return this.nextUser;
  }
  peekNextGroupId(): number {
    return this.nextGroup;
  }

  // ---- writes ----

  /** Creates or replaces a user; `groupIds` undefined leaves its memberships alone. */
  putUser(user: StoredUser, groupIds?: readonly number[]): void {
    const old = this.usersById.get(user.userId);
    if (old && old.username !== user.username) this.userIdsByName.delete(old.username);
    this.usersById.set(user.userId, user);
    this.userIdsByName.set(user.username, user.userId);
    if (groupIds) this.membership.setUserGroups(user.userId, groupIds);
    if (user.userId >= this.nextUser) this.nextUser = user.userId + 1;
    this.version++;
    this.observer?.({ kind: 'putUser', user, groupIds });
  }

  /** Deletes a user and its memberships; returns what was removed. */
  deleteUser(userId: number): StoredUser | undefined {
    const user = this.usersById.get(userId);
    if (!user) return undefined;
    this.usersById.delete(userId);
    this.userIdsByName.delete(user.username);
    this.membership.removeUser(userId);
    this.version++;
    this.observer?.({ kind: 'deleteUser', userId });
    return user;
  }

  /** Creates or replaces a group; `userIds` undefined leaves its members alone. */
  putGroup(group: StoredGroup, userIds?: readonly number[]): void {
    const old = this.groupsById.get(group.id);
    if (old && old.name !== group.name) this.groupIdsByName.delete(old.name);
    this.groupsById.set(group.id, group);
    this.groupIdsByName.set(group.name, group.id);
    if (userIds) this.membership.setGroupUsers(group.id, userIds);
    if (group.id >= this.nextGroup) this.nextGroup = group.id + 1;
    this.version++;
    this.observer?.({ kind: 'putGroup', group, userIds });
  }

  /** Deletes a group, its memberships and its ACLs; returns what was removed. */
  deleteGroup(id: number): { group: StoredGroup; aclIds: string[] } | undefined {
    const group = this.groupsById.get(id);
    if (!group) return undefined;
    const aclIds = this.aclIdsOf(id);
    for (const aclId of aclIds) {
      const acl = this.aclsById.get(aclId);
      if (acl) this.aclIdsByKey.delete(aclKey(acl.groupId, acl.name));
      this.aclsById.delete(aclId);
    }
    this.aclIdsByGroup.delete(id);
    this.membership.removeGroup(id);
    this.groupsById.delete(id);
    this.groupIdsByName.delete(group.name);
    this.version++;
    this.observer?.({ kind: 'deleteGroup', id });
    return { group, aclIds };
  }

  /** Creates or replaces an ACL (its group never changes: the id names it). */
  putAcl(acl: StoredAcl): void {
    const old = this.aclsById.get(acl.id);
    if (old && old.name !== acl.name) this.aclIdsByKey.delete(aclKey(old.groupId, old.name));
    this.aclsById.set(acl.id, acl);
    this.aclIdsByKey.set(aclKey(acl.groupId, acl.name), acl.id);
    let ids = this.aclIdsByGroup.get(acl.groupId);
    if (!ids) {
      ids = new Set();
      this.aclIdsByGroup.set(acl.groupId, ids);
    }
    ids.add(acl.id);
    this.version++;
    this.observer?.({ kind: 'putAcl', acl });
  }

  /** Number of ACLs a group has. */
  aclCountOf(groupId: number): number {
    return this.aclIdsByGroup.get(groupId)?.size ?? 0;
  }

  // ---- persistence ----

  /** Calls `observer` with every change from now on (the journal); undefined stops it. */
  observe(observer: ((change: StoreChange) => void) | undefined): void {
    this.observer = observer;
  }

  /** The whole state at this instant; cheap because records are shared, not copied. */
  snapshot(): StoreSnapshot {
    const userSide = this.membership.freezeUserSide();
    return {
      nextUserId: this.nextUser,
      nextGroupId: this.nextGroup,
      users: [...this.usersById.values()],
      groups: [...this.groupsById.values()],
      acls: [...this.aclsById.values()],
      groupsOf: userSide.groupsOf,
      members: this.membership.membersSnapshot(),
      release: userSide.close,
    };
  }

  /** Raises the id counters (ids of deleted records are never given out again). */
  raiseIdCounters(nextUserId: number, nextGroupId: number): void {
    this.nextUser = Math.max(this.nextUser, nextUserId);
    this.nextGroup = Math.max(this.nextGroup, nextGroupId);
  }
}
