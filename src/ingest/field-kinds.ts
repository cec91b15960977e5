/**
 * What kind of value each field of a resource takes, derived once from the zod field schemas
 * of the spec (src/admin/schemas.ts), so coercion cannot drift from the schemas.
 */
import { z } from 'zod';
import { RESOURCES, type ResourceName } from '../admin/resources.js';

export type FieldKind =
  | 'string'
  /** A string where JSON `null` is a value of its own (ACL `searchFilter`). */
  | 'nullableString'
  | 'boolean'
  | 'integer'
  | 'stringList'
  | 'integerList'
  | 'object'
  /** An integer id, or a name the planner resolves to an id later. */
  | 'reference'
  /** A list of integer ids and/or names the planner resolves later. */
  | 'referenceList';

/**
 * Where an upload may name a record instead of giving its id. The schemas say integer; the
 * planner resolves names to ids before anything is sent.
 */
const REFERENCE_FIELDS: { readonly [R in ResourceName]?: Readonly<Record<string, FieldKind>> } = {
  users: { groups: 'referenceList' },
  groups: { users: 'referenceList' },
  acls: { groupId: 'reference' },
};

/**
 * `type` is nullable in the user schema only because a delete answer carries `null`; an upload
 * never sets it to null, so null means "leave as is" like for any other string.
 */
const NOT_NULLABLE_ON_INPUT: { readonly [R in ResourceName]?: readonly string[] } = {
  users: ['type'],
};

/** The kind of one zod field schema; throws for a shape the ingest cannot coerce. */
export function kindOfSchema(schema: z.ZodType): FieldKind {
  if (schema instanceof z.ZodString) return 'string';
  if (schema instanceof z.ZodBoolean) return 'boolean';
  if (schema instanceof z.ZodNumber && schema.isInt) return 'integer';
  if (schema instanceof z.ZodRecord) return 'object';
  if (schema instanceof z.ZodNullable) {
    const inner = kindOfSchema(schema.unwrap() as z.ZodType);
    if (inner === 'string') return 'nullableString';
  }
  if (schema instanceof z.ZodArray) {
    const element = kindOfSchema(schema.unwrap() as z.ZodType);
    if (element === 'string') return 'stringList';
    if (element === 'integer') return 'integerList';
  }
  throw new Error(`no field kind for zod schema of type "${schema.def.type}"`);
}

function deriveKinds(resource: ResourceName): ReadonlyMap<string, FieldKind> {
  const kinds = new Map<string, FieldKind>();
  for (const [field, schema] of Object.entries(RESOURCES[resource].fields)) {
    kinds.set(field, kindOfSchema(schema));
  }
  for (const field of NOT_NULLABLE_ON_INPUT[resource] ?? []) kinds.set(field, 'string');
  for (const [field, kind] of Object.entries(REFERENCE_FIELDS[resource] ?? {})) {
    kinds.set(field, kind);
  }
  return kinds;
}

const KINDS: { readonly [R in ResourceName]: ReadonlyMap<string, FieldKind> } = {
  users: deriveKinds('users'),
  groups: deriveKinds('groups'),
  acls: deriveKinds('acls'),
};

/** Field name → kind for a resource, in the spec's field order. */
export function fieldKinds(resource: ResourceName): ReadonlyMap<string, FieldKind> {
  return KINDS[resource];
}

/** Kinds whose empty value can be written ("" / [] / {}); integers and booleans have none. */
export function isClearable(kind: FieldKind): boolean {
  return kind !== 'boolean' && kind !== 'integer' && kind !== 'reference';
}
