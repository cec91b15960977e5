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
  /** Calls made to the admin server, for the batch's statistics. */
  readonly reads: number;
}
