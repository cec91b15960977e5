/**
 * What planning needs to know of the admin server's records. Two views answer it: the server
 * itself, one read per key (`RecordLookup`), and a snapshot of the directory read in bulk into
 * Redis before the import's first batch (`SnapshotLookup`).
 */
import type { AclRecord, GroupRecord, UserRecord } from '../admin/schemas.js';

export interface DirectoryView {
  /** The user with this username, or undefined. */
  user(username: string): Promise<UserRecord | undefined>;
  /** The group with this name, or undefined. */
  group(name: string): Promise<GroupRecord | undefined>;
  /** The group with this id, or undefined. */
  groupById(id: number): Promise<GroupRecord | undefined>;
  /** The user with this id, or undefined. */
  userById(userId: number): Promise<UserRecord | undefined>;
  aclById(id: string): Promise<AclRecord | undefined>;
  /** The ACL with this name in the group, or undefined. */
  aclByName(groupId: number, name: string): Promise<AclRecord | undefined>;
  /** A key on the server that looks like this one and is not it. */
  lookalikeOf?(key: string): Promise<string | undefined>;
  /** Reads ahead, in one round trip, what planning these records will ask for. */
  prefetch?(records: readonly Record<string, unknown>[]): Promise<void>;
  /** What was read ahead, answered at once; undefined when nothing is. */
  readAhead?(): ReadAheadView;
  /** Calls made to the admin server, for the batch's statistics. */
  readonly reads: number;
}

/** A view's answer at once: the record, undefined when there is none, NOT_READ when it must ask. */
export const NOT_READ: unique symbol = Symbol('not read ahead');
export type ReadAhead<T> = T | undefined | typeof NOT_READ;

/**
 * What a view read ahead (a snapshot's records and indexes for a batch), without waiting: a
 * record all of whose lookups it answers is planned without a promise.
 */
export interface ReadAheadView {
  user(username: string): ReadAhead<UserRecord>;
  group(name: string): ReadAhead<GroupRecord>;
  groupById(id: number): ReadAhead<GroupRecord>;
  userById(userId: number): ReadAhead<UserRecord>;
  lookalikeOf(key: string): ReadAhead<string>;
}
