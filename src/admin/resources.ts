/** What distinguishes the three resources of the admin interface, in one place. */
import type { z } from 'zod';
import {
  aclFields,
  aclReadAnswerSchema,
  aclRecordSchema,
  aclWriteAnswerSchema,
  groupFields,
  groupReadAnswerSchema,
  groupRecordSchema,
  groupWriteAnswerSchema,
  userFields,
  userReadAnswerSchema,
  userRecordSchema,
  userWriteAnswerSchema,
  type AclRecord,
  type GroupRecord,
  type UserRecord,
} from './schemas.js';

export type ResourceName = 'users' | 'groups' | 'acls';
export const RESOURCE_NAMES: readonly ResourceName[] = ['users', 'groups', 'acls'];

export interface ResourceRecordMap {
  users: UserRecord;
  groups: GroupRecord;
  acls: AclRecord;
}

export interface ResourceDescriptor<R extends ResourceName = ResourceName> {
  readonly name: R;
  /** Path segment after /wf/restapi/v2/admin/. */
  readonly path: 'userManager' | 'groupManager' | 'aclManager';
  /** Form field that carries the JSON array of records (same as the resource name). */
  readonly formField: R;
  /** Field holding the server-generated id. */
  readonly idField: 'userId' | 'id';
  /** Natural key used for lookups, delete and create-conflict checks. */
  readonly keyField: 'username' | 'name';
  /** Field types, keyed by field name. */
  readonly fields: Readonly<Record<string, z.ZodType>>;
  /** A record as requests carry it: every field optional. */
  readonly schema: z.ZodType<ResourceRecordMap[R]>;
  /** A record of a GET answer: its id required, other fields as they come. */
  readonly readAnswerSchema: z.ZodType<ResourceRecordMap[R]>;
  /** A record of a PUT, POST or DELETE answer: its id and key required (ACLs: id and groupId). */
  readonly writeAnswerSchema: z.ZodType<ResourceRecordMap[R]>;
  /** Fields the service fills in and never takes from an upload. */
  readonly serviceFields: readonly string[];
}

export const RESOURCES: { readonly [R in ResourceName]: ResourceDescriptor<R> } = {
  users: {
    name: 'users',
    path: 'userManager',
    formField: 'users',
    idField: 'userId',
    keyField: 'username',
    fields: userFields,
    schema: userRecordSchema,
    readAnswerSchema: userReadAnswerSchema,
    writeAnswerSchema: userWriteAnswerSchema,
    serviceFields: [],
  },
  groups: {
    name: 'groups',
    path: 'groupManager',
    formField: 'groups',
    idField: 'id',
    keyField: 'name',
    fields: groupFields,
    schema: groupRecordSchema,
    readAnswerSchema: groupReadAnswerSchema,
    writeAnswerSchema: groupWriteAnswerSchema,
    serviceFields: ['acls'],
  },
  acls: {
    name: 'acls',
    path: 'aclManager',
    formField: 'acls',
    idField: 'id',
    keyField: 'name',
    fields: aclFields,
    schema: aclRecordSchema,
    readAnswerSchema: aclReadAnswerSchema,
    writeAnswerSchema: aclWriteAnswerSchema,
    serviceFields: [],
  },
};

export const ADMIN_PATH_PREFIX = '/wf/restapi/v2/admin/';

export function isResourceName(value: unknown): value is ResourceName {
  return value === 'users' || value === 'groups' || value === 'acls';
}
