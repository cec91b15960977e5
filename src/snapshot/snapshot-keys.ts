/** Where an import's snapshot of the directory lives in Redis, beside the import's other keys. */
import { importKeyBase } from '../redis/key-tags.js';

export interface SnapshotKeys {
  /** Hash: natural key → compact record, for the records whose key the upload carries (ACLs: all). */
  records: string;
  /** Hash: group name → id, every group on the server (name resolution). */
  groupIds: string;
  /** Hash: group id → name, every group on the server (id references, ambiguity). */
  groupNames: string;
  /** Hash: username → userId, every user (a groups upload naming members); only when needed. */
  userIds: string;
  /** Hash: userId → username, every user; only when needed. */
  userNames: string;
  /** Hash: a key of the upload → the different key on the server that looks the same. */
  lookalikes: string;
}

export function snapshotKeys(prefix: string, importId: string): SnapshotKeys {
  const base = `${importKeyBase(prefix, importId)}:snap`;
  return {
    records: `${base}:records`,
    groupIds: `${base}:group-ids`,
    groupNames: `${base}:group-names`,
    userIds: `${base}:user-ids`,
    userNames: `${base}:user-names`,
    lookalikes: `${base}:lookalikes`,
  };
}

export function snapshotKeyList(keys: SnapshotKeys): string[] {
  return [
    keys.records,
    keys.groupIds,
    keys.groupNames,
    keys.userIds,
    keys.userNames,
    keys.lookalikes,
  ];
}

/** List of a sync's server keys in scope that its file leaves out (see buildSnapshot). */
export function missingListKey(prefix: string, importId: string): string {
  return `${importKeyBase(prefix, importId)}:snap:missing`;
}

/** Field of an ACL in the records hash, by id. */
export function aclIdField(id: string): string {
  return `id:${id}`;
}

/** Field of an ACL in the records hash, by group and name; its value is the ACL's id. */
export function aclNameField(groupId: number, name: string): string {
  return `gn:${groupId}:${name}`;
}

/** How many records the last snapshot of a resource found on a target: the `auto` rule's measure. */
export function directorySizeKey(prefix: string, target: string, resource: string): string {
  return `${prefix}:directory:${target}:${resource}:size`;
}
