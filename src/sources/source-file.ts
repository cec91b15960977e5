/**
 * The sources file (PORTER_SOURCES_FILE): a JSON object of source name → source, shaped like the
 * targets file. A source is a directory porter reads rows from (LDAP or Active Directory). A
 * secret is never written in it: the file names where it is read from, as for targets.
 */
import { z } from 'zod';
import { secretSourceSchema, TARGET_NAME, TARGET_NAME_TEXT } from '../targets/target-file.js';

/** Source names follow the rule of target names. */
export const SOURCE_NAME = TARGET_NAME;
export const SOURCE_NAME_TEXT = TARGET_NAME_TEXT;

/** An LDAP attribute name, with options (`member;range=0-*`) left to porter. */
const attributeName = z.string().regex(/^[A-Za-z][A-Za-z0-9-]*$/, 'an LDAP attribute name');

export const groupsEntrySchema = z.strictObject({
  /** Where the groups are; the source's baseDN when unset. */
  baseDN: z.string().min(1).optional(),
  scope: z.enum(['sub', 'one']).optional(),
  /** @defaultValue `(|(objectClass=groupOfNames)(objectClass=group))` */
  filter: z.string().min(3).optional(),
  /** The attribute that lists a group's members by DN. @defaultValue `member` */
  memberAttribute: attributeName.optional(),
  /** The attribute that names a group (its DAM name, its users' `memberOf` list). @defaultValue `cn` */
  nameAttribute: attributeName.optional(),
  /** Attributes of a group row besides the name, members and anchor. */
  attributes: z.array(attributeName).max(100).optional(),
  /** Levels of nested groups followed; deeper members are left out. @defaultValue 8 */
  nestingDepth: z.number().int().min(0).max(32).optional(),
});

export const ldapSourceSchema = z
  .strictObject({
    kind: z.literal('ldap'),
    /** `ldap://host:port` or `ldaps://host:port`. */
    url: z.url({ protocol: /^ldaps?$/, error: 'an ldap:// or ldaps:// URL' }),
    description: z.string().max(200).optional(),
    /** Upgrade an ldap:// connection with StartTLS before binding. @defaultValue false */
    startTLS: z.boolean().optional(),
    /** The CA that signs the directory's certificate (PEM); the system's CAs when unset. */
    ca: z.strictObject({ file: z.string().min(1) }).optional(),
    bindDN: z.string().min(1).optional(),
    password: secretSourceSchema.optional(),
    baseDN: z.string().min(1),
    scope: z.enum(['sub', 'one']).optional(),
    /** @defaultValue `(objectClass=inetOrgPerson)`, or `(&(objectCategory=person)(objectClass=user))` for AD */
    filter: z.string().min(3).optional(),
    /** Entries per page of the paged search (RFC 2696). @defaultValue 500 */
    pageSize: z.number().int().min(1).max(5000).optional(),
    /** The attributes read as the row's columns, besides `dn` and the anchor. */
    attributes: z.array(attributeName).min(1).max(200),
    /** `openldap` (anchor entryUUID) or `ad` (anchor objectGUID, whenChanged). @defaultValue openldap */
    flavor: z.enum(['openldap', 'ad']).optional(),
    /** The attribute holding each entry's immutable id. @defaultValue entryUUID / objectGUID */
    anchorAttribute: attributeName.optional(),
    /** Seconds the server may spend on one page; 0 = its own limit. @defaultValue 0 */
    timeLimit: z.number().int().min(0).optional(),
    timeoutMs: z.number().int().positive().optional(),
    connectTimeoutMs: z.number().int().positive().optional(),
    groups: groupsEntrySchema.optional(),
  })
  // a bindDN with no password is an unauthenticated bind (RFC 4513 §5.1.2), which a directory
  // may let through as anonymous: a read that sees less than it should, taken for the directory
  .refine((entry) => entry.bindDN === undefined || entry.password !== undefined, {
    path: ['password'],
    error: 'a bindDN needs its password (binding with none is an unauthenticated bind)',
  });
export type LdapSourceEntry = z.infer<typeof ldapSourceSchema>;

export const sourcesFileSchema = z.record(
  z.string().regex(SOURCE_NAME, SOURCE_NAME_TEXT),
  ldapSourceSchema,
);
