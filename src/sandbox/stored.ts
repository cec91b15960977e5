/**
 * The records as the sandbox keeps them. They are never mutated: a change replaces
 * the object, so a snapshot of references is a consistent picture (persistence relies on it).
 * Memberships and a group's ACLs live in the store's indexes, not here.
 */

/** Free-text user fields, in answer order. `position` is accepted but always answered as "". */
export const USER_PROFILE_FIELDS = [
  'firstName',
  'middleName',
  'lastName',
  'company',
  'dept',
  'position',
  'address1',
  'address2',
  'city',
  'state',
  'zip',
  'country',
  'phone',
  'ext',
  'email',
] as const;

export type UserProfileField = (typeof USER_PROFILE_FIELDS)[number];
/** Profile fields the store keeps (all but position). */
export type StoredProfileField = Exclude<UserProfileField, 'position'>;

export const DEFAULT_USER_TYPE = 'General User';
export const DEFAULT_USER_STATUS = 'Active';
/** Status values the sandbox accepts (the ones seen in the product). */
export const USER_STATUSES: readonly string[] = ['Active', 'Locked'];

export type StoredUser = {
  readonly userId: number;
  readonly username: string;
  readonly type: string;
  readonly status: string;
  readonly substitutionMap: Readonly<Record<string, unknown>>;
} & { readonly [F in StoredProfileField]: string };

export interface StoredGroup {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  readonly hidden: boolean;
  /** "" means not set: the field is then left out of answers. */
  readonly ldapDn: string;
  readonly priority: number;
  readonly editLevel: number;
  readonly viewLevel: number;
  readonly loginText: string;
  readonly loadingDockType: number;
}

export interface StoredAcl {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly hidden: boolean;
  readonly groupId: number;
  readonly revokedPermissions: readonly string[];
  readonly rootPath: string;
  readonly workspaces: readonly string[];
  readonly searchFilter: string | null;
  readonly forms: readonly string[];
  readonly uploadForm: string;
}

/** Shared by every user without substitutions, so a million users do not hold a million `{}`. */
export const EMPTY_MAP: Readonly<Record<string, unknown>> = Object.freeze({});

/** loadingDockType values kept as sent; anything else is stored as 1 (the product turned 10000 into 1). */
export const LOADING_DOCK_TYPE_MIN = 0;
export const LOADING_DOCK_TYPE_MAX = 3;
export const LOADING_DOCK_TYPE_FALLBACK = 1;

/** The stored loadingDockType for a requested one. */
export function normalizeLoadingDockType(value: number | undefined): number {
  if (value === undefined) return LOADING_DOCK_TYPE_MIN;
  return value >= LOADING_DOCK_TYPE_MIN && value <= LOADING_DOCK_TYPE_MAX
    ? value
    : LOADING_DOCK_TYPE_FALLBACK;
}

/** Where a user's fields come from: a parsed request record, a data file line, or the seeder. */
export type UserSource = { readonly [F in StoredProfileField]?: string } & {
  readonly type?: string | null;
  readonly status?: string;
  readonly substitutionMap?: Readonly<Record<string, unknown>>;
};

/**
 * A user with every field in one fixed order, so all users share one object shape.
 * Fields the source lacks get their defaults (an update overwrites, so this is also the reset).
 */
export function makeUser(userId: number, username: string, source: UserSource): StoredUser {
  const substitutions = source.substitutionMap;
  return {
    userId,
    username,
    firstName: source.firstName ?? '',
    middleName: source.middleName ?? '',
    lastName: source.lastName ?? '',
    company: source.company ?? '',
    dept: source.dept ?? '',
    address1: source.address1 ?? '',
    address2: source.address2 ?? '',
    city: source.city ?? '',
    state: source.state ?? '',
    zip: source.zip ?? '',
    country: source.country ?? '',
    phone: source.phone ?? '',
    ext: source.ext ?? '',
    email: source.email ?? '',
    type: source.type ?? DEFAULT_USER_TYPE,
    status: source.status ?? DEFAULT_USER_STATUS,
    substitutionMap:
      substitutions && Object.keys(substitutions).length > 0 ? substitutions : EMPTY_MAP,
  };
}

/** A group with defaults for every field not given. */
export function makeGroup(
  fields: Partial<StoredGroup> & { id: number; name: string },
): StoredGroup {
  return {
    id: fields.id,
    name: fields.name,
    description: fields.description ?? '',
    hidden: fields.hidden ?? false,
    ldapDn: fields.ldapDn ?? '',
    priority: fields.priority ?? 0,
    editLevel: fields.editLevel ?? 0,
    viewLevel: fields.viewLevel ?? 0,
    loginText: fields.loginText ?? '',
    loadingDockType: normalizeLoadingDockType(fields.loadingDockType),
  };
}

/** An ACL with defaults for every field not given; `workspaces` must already be filled. */
export function makeAcl(
  fields: Partial<StoredAcl> & {
    id: string;
    name: string;
    groupId: number;
    workspaces: readonly string[];
  },
): StoredAcl {
  return {
    id: fields.id,
    name: fields.name,
    description: fields.description ?? '',
    hidden: fields.hidden ?? false,
    groupId: fields.groupId,
    revokedPermissions: fields.revokedPermissions ?? [],
    rootPath: fields.rootPath ?? '',
    workspaces: fields.workspaces,
    searchFilter: fields.searchFilter === undefined ? null : fields.searchFilter,
    forms: fields.forms ?? [],
    uploadForm: fields.uploadForm ?? '',
  };
}
