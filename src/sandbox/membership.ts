/**
 * The one membership relation between users and groups, indexed from both sides:
 * a group's `users` and a user's `groups` are the same facts, so every change goes
 * through here and shows on both sides at once.
 */

const NONE: readonly number[] = Object.freeze([]);

/** The user side of the relation as it was when the view was taken. */
export interface FrozenUserSide {
  groupsOf(userId: number): readonly number[];
  /** Stops keeping the view (until then, every user changed since costs one saved list). */
  close(): void;
}

/** Users ↔ groups, kept consistent from both sides. */
export class Membership {
  /** User id → its group ids, in the order they were added. Arrays are replaced, never mutated. */
  private readonly groupsByUser = new Map<number, readonly number[]>();
  /** Group id → its member ids, in the order they were added. */
  private readonly usersByGroup = new Map<number, Set<number>>();
  /**
   * One map per open frozen view: user id → its groups when the view was taken, saved just
   * before the first change since (lists are replaced, never mutated, so saving is O(1)).
   */
  private readonly frozenViews = new Set<Map<number, readonly number[]>>();

  /** Group ids of a user ([] when none). */
  groupsOf(userId: number): readonly number[] {
    return this.groupsByUser.get(userId) ?? NONE;
  }

  /** Member ids of a group ([] when none). */
  usersOf(groupId: number): number[] {
    const members = this.usersByGroup.get(groupId);
    return members ? [...members] : [];
  }

  /** Number of members of a group. */
  memberCount(groupId: number): number {
    return this.usersByGroup.get(groupId)?.size ?? 0;
  }

  /** Makes `groupIds` the user's groups (duplicates dropped, order kept). O(old + new). */
  setUserGroups(userId: number, groupIds: readonly number[]): void {
    const wanted = uniqueValues(groupIds);
    const old = this.groupsOf(userId);
    const isWanted = membershipTest(wanted);
    for (const groupId of old) {
      if (!isWanted(groupId)) this.usersByGroup.get(groupId)?.delete(userId);
    }
    const wasMember = membershipTest(old);
    for (const groupId of wanted) {
      if (!wasMember(groupId)) this.membersOf(groupId).add(userId);
    }
    this.storeGroups(userId, wanted);
  }

  /** Makes `userIds` the group's members, replacing the old list (spec 4.2). O(old + new). */
  setGroupUsers(groupId: number, userIds: readonly number[]): void {
    const wanted = new Set(userIds);
    const old = this.usersByGroup.get(groupId) ?? new Set<number>();
    for (const userId of old) {
      if (!wanted.has(userId)) this.dropGroupFromUser(userId, groupId);
    }
    for (const userId of wanted) {
      if (!old.has(userId)) this.storeGroups(userId, [...this.groupsOf(userId), groupId]);
    }
    if (wanted.size > 0) this.usersByGroup.set(groupId, wanted);
    else this.usersByGroup.delete(groupId);
  }

  /** Takes a deleted user out of all its groups. */
  removeUser(userId: number): void {
    this.saveForFrozenViews(userId);
    for (const groupId of this.groupsOf(userId)) this.usersByGroup.get(groupId)?.delete(userId);
    this.groupsByUser.delete(userId);
  }

  /** Takes a deleted group out of all its members' lists. O(members). */
  removeGroup(groupId: number): void {
    const members = this.usersByGroup.get(groupId);
    if (!members) return;
    for (const userId of members) this.dropGroupFromUser(userId, groupId);
    this.usersByGroup.delete(groupId);
  }

  /**
   * The user side as it is now, readable while changes go on, without copying it: a copy of
   * a million users' lists would stall every request. `close()` ends the view.
   */
  freezeUserSide(): FrozenUserSide {
    const saved = new Map<number, readonly number[]>();
    this.frozenViews.add(saved);
    return {
      groupsOf: (userId) => saved.get(userId) ?? this.groupsOf(userId),
      close: () => {
        this.frozenViews.delete(saved);
      },
    };
  }

  /** A copy of the group side (member ids in the order they were added). */
  membersSnapshot(): Map<number, number[]> {
    const members = new Map<number, number[]>();
    for (const [groupId, userIds] of this.usersByGroup) members.set(groupId, [...userIds]);
    return members;
  }

  private saveForFrozenViews(userId: number): void {
    for (const saved of this.frozenViews) {
      if (!saved.has(userId)) saved.set(userId, this.groupsOf(userId));
    }
  }

  private membersOf(groupId: number): Set<number> {
    let members = this.usersByGroup.get(groupId);
    if (!members) {
      members = new Set();
      this.usersByGroup.set(groupId, members);
    }
    return members;
  }

  private dropGroupFromUser(userId: number, groupId: number): void {
    this.storeGroups(
      userId,
      this.groupsOf(userId).filter((id) => id !== groupId),
    );
  }

  /** `groupIds` must be a fresh array: it is frozen and kept. */
  private storeGroups(userId: number, groupIds: number[]): void {
    this.saveForFrozenViews(userId);
    if (groupIds.length === 0) this.groupsByUser.delete(userId);
    else this.groupsByUser.set(userId, Object.freeze(groupIds));
  }
}

/** Below this size a linear scan beats building a Set (users are in a handful of groups). */
const SMALL = 16;

/** The values without repeats, first occurrence kept. */
function uniqueValues(values: readonly number[]): number[] {
  if (values.length > SMALL) return [...new Set(values)];
  const unique: number[] = [];
  for (const value of values) if (!unique.includes(value)) unique.push(value);
  return unique;
}

/** A membership test over `values`: a scan for small lists, a Set for large ones. */
function membershipTest(values: readonly number[]): (value: number) => boolean {
  if (values.length <= SMALL) return (value) => values.includes(value);
  const set = new Set(values);
  return (value) => set.has(value);
}
