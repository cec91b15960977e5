/**
 * The SCIM resource schemas porter serves (RFC 7643 §4): core User, the Enterprise User
 * extension and Group, as data. Names are canonical here; every other part of src/scim/ finds
 * an attribute through `findAttribute`, which ignores case, so `Emails`, `name.FamilyName` and
 * `urn:…:User:Department` are the attributes they mean.
 */

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';

export type AttributeType = 'string' | 'boolean' | 'complex' | 'dateTime' | 'reference' | 'integer';

export interface Attribute {
  name: string;
  type: AttributeType;
  multiValued?: boolean;
  /** Strings compared with regard to case. @defaultValue false */
  caseExact?: boolean;
  required?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  /** `never`: not sent back; `always`: sent whatever `attributes` asks. @defaultValue 'default' */
  returned?: 'always' | 'never' | 'default' | 'request';
  uniqueness?: 'none' | 'server' | 'global';
  description?: string;
  subAttributes?: Attribute[];
}

export interface ResourceSchema {
  id: string;
  name: string;
  description: string;
  attributes: Attribute[];
}

export type ResourceKind = 'User' | 'Group';

const text = (name: string, more: Partial<Attribute> = {}): Attribute => ({
  name,
  type: 'string',
  ...more,
});

/** value/display/type/primary: emails, phoneNumbers, roles. */
const multiValue = (name: string, description: string): Attribute => ({
  name,
  type: 'complex',
  multiValued: true,
  description,
  subAttributes: [
    text('value'),
    text('display'),
    text('type'),
    { name: 'primary', type: 'boolean' },
  ],
});

/** Attributes every resource has (RFC 7643 §3.1). */
export const COMMON_ATTRIBUTES: Attribute[] = [
  text('id', { caseExact: true, mutability: 'readOnly', returned: 'always', uniqueness: 'server' }),
  text('externalId', { caseExact: true }),
  {
    name: 'meta',
    type: 'complex',
    mutability: 'readOnly',
    subAttributes: [
      text('resourceType', { caseExact: true, mutability: 'readOnly' }),
      { name: 'created', type: 'dateTime', mutability: 'readOnly' },
      { name: 'lastModified', type: 'dateTime', mutability: 'readOnly' },
      { name: 'location', type: 'reference', mutability: 'readOnly' },
      text('version', { caseExact: true, mutability: 'readOnly' }),
    ],
  },
];

export const USER: ResourceSchema = {
  id: USER_SCHEMA,
  name: 'User',
  description: 'User Account',
  attributes: [
    text('userName', {
      required: true,
      uniqueness: 'server',
      description: 'Unique identifier for the User, compared without regard to case',
    }),
    {
      name: 'name',
      type: 'complex',
      subAttributes: [
        'formatted',
        'familyName',
        'givenName',
        'middleName',
        'honorificPrefix',
        'honorificSuffix',
      ].map((name) => text(name)),
    },
    text('displayName'),
    text('nickName'),
    { name: 'profileUrl', type: 'reference' },
    text('title'),
    text('userType'),
    text('preferredLanguage'),
    text('locale'),
    text('timezone'),
    { name: 'active', type: 'boolean', description: 'false locks the DAM user; it is not deleted' },
    { name: 'password', type: 'string', mutability: 'writeOnly', returned: 'never' },
    multiValue('emails', 'Email addresses for the user'),
    multiValue('phoneNumbers', 'Phone numbers for the User'),
    multiValue('ims', 'Instant messaging addresses for the User'),
    multiValue('photos', 'URLs of photos of the User'),
    {
      name: 'addresses',
      type: 'complex',
      multiValued: true,
      subAttributes: [
        ...[
          'formatted',
          'streetAddress',
          'locality',
          'region',
          'postalCode',
          'country',
          'type',
        ].map((name) => text(name)),
        { name: 'primary', type: 'boolean' },
      ],
    },
    {
      name: 'groups',
      type: 'complex',
      multiValued: true,
      mutability: 'readOnly',
      description: 'The groups of the DAM user; change them through the Group resource',
      subAttributes: [
        text('value', { mutability: 'readOnly' }),
        { name: '$ref', type: 'reference', mutability: 'readOnly' },
        text('display', { mutability: 'readOnly' }),
        text('type', { mutability: 'readOnly' }),
      ],
    },
    multiValue('entitlements', 'Entitlements of the User'),
    multiValue('roles', 'Roles of the User'),
    multiValue('x509Certificates', 'Certificates of the User'),
  ],
};

export const ENTERPRISE_USER: ResourceSchema = {
  id: ENTERPRISE_SCHEMA,
  name: 'EnterpriseUser',
  description: 'Enterprise User',
  attributes: [
    text('employeeNumber'),
    text('costCenter'),
    text('organization'),
    text('division'),
    text('department'),
    {
      name: 'manager',
      type: 'complex',
      subAttributes: [
        text('value'),
        { name: '$ref', type: 'reference' },
        text('displayName', { mutability: 'readOnly' }),
      ],
    },
  ],
};

export const GROUP: ResourceSchema = {
  id: GROUP_SCHEMA,
  name: 'Group',
  description: 'Group',
  attributes: [
    text('displayName', { required: true, uniqueness: 'server' }),
    {
      name: 'members',
      type: 'complex',
      multiValued: true,
      returned: 'default',
      subAttributes: [
        text('value', { mutability: 'immutable', caseExact: true }),
        { name: '$ref', type: 'reference', mutability: 'immutable' },
        text('display'),
        text('type', { mutability: 'immutable' }),
      ],
    },
  ],
};

/** The core schema and the extensions of each resource type. */
export const RESOURCE_SCHEMAS: Record<
  ResourceKind,
  { core: ResourceSchema; extensions: ResourceSchema[] }
> = {
  User: { core: USER, extensions: [ENTERPRISE_USER] },
  Group: { core: GROUP, extensions: [] },
};

function byName(attributes: readonly Attribute[], name: string): Attribute | undefined {
  const wanted = name.toLowerCase();
  return attributes.find((attribute) => attribute.name.toLowerCase() === wanted);
}

/** The top-level attributes of a resource type's core schema, common ones included. */
export function coreAttributes(kind: ResourceKind): Attribute[] {
  return [...COMMON_ATTRIBUTES, ...RESOURCE_SCHEMAS[kind].core.attributes];
}

/** The extension of a resource type whose URN this is (any case), if any. */
export function findExtension(kind: ResourceKind, urn: string): ResourceSchema | undefined {
  const wanted = urn.toLowerCase();
  return RESOURCE_SCHEMAS[kind].extensions.find((schema) => schema.id.toLowerCase() === wanted);
}

/** An attribute by name (any case) among the given ones. */
export function findAttribute(
  attributes: readonly Attribute[],
  name: string,
): Attribute | undefined {
  return byName(attributes, name);
}

/**
 * The resource without its write-only attributes (a User's password): what porter keeps and
 * answers. A password an identity provider sends is for the DAM's mapping alone, never stored
 * with the resource nor sent back (RFC 7643 §7, `returned: never`).
 */
export function withoutWriteOnly<T extends Record<string, unknown>>(
  kind: ResourceKind,
  resource: T,
): T {
  const out = { ...resource };
  for (const attribute of coreAttributes(kind)) {
    if (attribute.returned === 'never') delete out[attribute.name];
  }
  return out;
}
