/**
 * Record schemas of the admin interface, from the field tables of the spec (section 2).
 * The sandbox validates requests with them and the client validates answers with them,
 * so the two cannot drift.
 */
import { z } from 'zod';

const int = z.number().int();

/** ACL fields as the interface carries them (2.1). Every field optional: requests and answers both omit some. */
export const aclFields = {
  id: z.string(),
  name: z.string(),
  description: z.string(),
  hidden: z.boolean(),
  groupId: int,
  revokedPermissions: z.array(z.string()),
  rootPath: z.string(),
  workspaces: z.array(z.string()),
  searchFilter: z.string().nullable(),
  forms: z.array(z.string()),
  uploadForm: z.string(),
};

/** Group fields (2.2). */
export const groupFields = {
  id: int,
  name: z.string(),
  description: z.string(),
  hidden: z.boolean(),
  ldapDn: z.string(),
  priority: int,
  editLevel: int,
  viewLevel: int,
  loginText: z.string(),
  loadingDockType: int,
  acls: z.array(z.string()),
  users: z.array(int),
};

/** User fields (2.3). `type` is null and `status` "" in the answer of a delete. */
export const userFields = {
  userId: int,
  username: z.string(),
  firstName: z.string(),
  middleName: z.string(),
  lastName: z.string(),
  company: z.string(),
  dept: z.string(),
  position: z.string(),
  address1: z.string(),
  address2: z.string(),
  city: z.string(),
  state: z.string(),
  zip: z.string(),
  country: z.string(),
  phone: z.string(),
  ext: z.string(),
  email: z.string(),
  type: z.string().nullable(),
  status: z.string(),
  primaryGroup: int,
  groups: z.array(int),
  substitutionMap: z.record(z.string(), z.unknown()),
};

/** A record as sent or returned; unknown keys are kept so nothing the server adds is lost. */
export const aclRecordSchema = z.looseObject(aclFields).partial();
export const groupRecordSchema = z.looseObject(groupFields).partial();
export const userRecordSchema = z.looseObject(userFields).partial();

/**
 * Answers of a GET: fields may be missing (the spec says so of ldapDn, of strings a record never
 * had), but every record carries its id: a record without one cannot be read back or written.
 */
export const aclReadAnswerSchema = aclRecordSchema.required({ id: true }).extend({
  id: z.string().min(1),
});
export const groupReadAnswerSchema = groupRecordSchema.required({ id: true });
export const userReadAnswerSchema = userRecordSchema.required({ userId: true });

/**
 * Answers of PUT, POST and DELETE: each record carries its id and its key (users: userId and
 * username; groups: id and name; ACLs: id and groupId). The spec's DELETE answers do too: a
 * deleted group comes back as it was, a deleted user with its userId and username (type null,
 * status "", groups []).
 */
export const aclWriteAnswerSchema = aclRecordSchema.required({ id: true, groupId: true }).extend({
  id: z.string().min(1),
});
export const groupWriteAnswerSchema = groupRecordSchema.required({ id: true, name: true });
export const userWriteAnswerSchema = userRecordSchema.required({ userId: true, username: true });

export type AclRecord = z.infer<typeof aclRecordSchema>;
export type GroupRecord = z.infer<typeof groupRecordSchema>;
export type UserRecord = z.infer<typeof userRecordSchema>;
export type AdminRecord = AclRecord | GroupRecord | UserRecord;

/** Error body of the admin interface (the sandbox's choice; real servers may differ). */
export const adminErrorBodySchema = z.looseObject({
  errorcode: z.union([z.string(), z.number()]),
  message: z.string().optional(),
  index: z.number().int().optional(),
});
export type AdminErrorBody = z.infer<typeof adminErrorBodySchema>;

/** User types the real product knows; the two administrator types are guarded on import. */
export const USER_TYPES = ['General User', 'Group Administrator', 'Global Administrator'] as const;

/** Permission names observed in the spec; others are warned about, never refused. */
export const KNOWN_PERMISSIONS: ReadonlySet<string> = new Set([
  'fileUpload',
  'dragDrop',
  'disablecontextualmenu',
  'importAssets',
  'replaceAssets',
  'saveMetadataTemplate',
  'externalLinks',
  'renameAssets',
  'customDownload',
  'archive',
  'version',
  'uploadAnywhere',
  'checkOutAdmin',
  'checkOut',
  'notifications',
  'dictionaries',
  'triggerWorkflow',
  'sendEmail',
  'rss',
  'viewGlobalAssetLog',
  'folderAction',
  'bundle',
  'quickDownload',
  'contentPools',
  'linkAssets',
  'contactSheet',
  'brandPortal',
  'deleteAccess',
  'thumbnailDelete',
  'playOrig',
  'fileAction',
  'changePassword',
  'newAssets',
  'addDiscussion',
  'editMetaData',
  'viewDiscussion',
]);
