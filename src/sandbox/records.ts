/**
 * Shaping stored records into answers. Where the spec describes an answer's shape
 * (omitted strings, position "", deleted users), the rule lives here and only here.
 */
import type { AclRecord, GroupRecord, UserRecord } from '../admin/schemas.js';
import {
  USER_PROFILE_FIELDS,
  type StoredAcl,
  type StoredGroup,
  type StoredUser,
  type UserProfileField,
} from './stored.js';

/** The value answered for a profile field: position always comes back "" (spec 2.3). */
function profileValue(user: StoredUser, field: UserProfileField): string {
  return field === 'position' ? '' : user[field];
}

/** A user as GET shows it: every field, never-set strings as "". */
export function userRecord(user: StoredUser, groups: readonly number[]): UserRecord {
  const record: UserRecord = { userId: user.userId, username: user.username };
  for (const field of USER_PROFILE_FIELDS) record[field] = profileValue(user, field);
  record.type = user.type;
  record.status = user.status;
  record.groups = [...groups];
  record.substitutionMap = { ...user.substitutionMap };
  return record;
}

/**
 * A user as a create or update answers it: profile strings the request did not carry
 * are left out (spec 2.3, observed behaviour 1); type, status, groups and
 * substitutionMap always come back. primaryGroup never does.
 */
export function userWriteRecord(
  user: StoredUser,
  groups: readonly number[],
  carried: readonly UserProfileField[],
): UserRecord {
  const record: UserRecord = { userId: user.userId, username: user.username };
  for (const field of carried) record[field] = profileValue(user, field);
  record.type = user.type;
  record.status = user.status;
  record.groups = [...groups];
  record.substitutionMap = { ...user.substitutionMap };
  return record;
}

/**
 * A deleted user as DELETE answers it, whether looked up by id or by username:
 * id and username, type null, status "", groups [] (spec 4.3); other fields absent.
 */
export function userDeletedRecord(user: StoredUser): UserRecord {
  return { userId: user.userId, username: user.username, type: null, status: '', groups: [] };
}

/** A group as every answer shows it; ldapDn only when set (spec 2.2). */
export function groupRecord(
  group: StoredGroup,
  aclIds: readonly string[],
  userIds: readonly number[],
): GroupRecord {
  const record: GroupRecord = {
    id: group.id,
    name: group.name,
    description: group.description,
    hidden: group.hidden,
  };
  if (group.ldapDn !== '') record.ldapDn = group.ldapDn;
  record.priority = group.priority;
  record.editLevel = group.editLevel;
  record.viewLevel = group.viewLevel;
  record.loginText = group.loginText;
  record.loadingDockType = group.loadingDockType;
  record.acls = [...aclIds];
  record.users = [...userIds];
  return record;
}

/** An ACL as every answer shows it: all fields. */
export function aclRecord(acl: StoredAcl): AclRecord {
  return {
    id: acl.id,
    name: acl.name,
    description: acl.description,
    hidden: acl.hidden,
    groupId: acl.groupId,
    revokedPermissions: [...acl.revokedPermissions],
    rootPath: acl.rootPath,
    workspaces: [...acl.workspaces],
    searchFilter: acl.searchFilter,
    forms: [...acl.forms],
    uploadForm: acl.uploadForm,
  };
}
