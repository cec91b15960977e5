/**
 * Attribute paths (RFC 7644 §3.10): `userName`, `name.givenName`, `emails.value`,
 * `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department`, matched without
 * regard to case and resolved to the schema's canonical names, and reading their values from a
 * resource in canonical form (canonical.ts).
 */
import {
  coreAttributes,
  findAttribute,
  findExtension,
  RESOURCE_SCHEMAS,
  type Attribute,
  type ResourceKind,
} from './resource-schemas.js';

export interface AttributePath {
  /** The extension's URN when the attribute is one of an extension's. */
  extension?: string;
  /** Canonical name of the attribute, or the name as given when the schema has none. */
  name: string;
  sub?: string;
  attribute?: Attribute;
  subAttribute?: Attribute;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Where a dotted name begins after a schema URN prefix, and which schema it is. */
function splitUrn(kind: ResourceKind, text: string): { extension?: string; rest: string } {
  const lower = text.toLowerCase();
  const core = RESOURCE_SCHEMAS[kind].core.id.toLowerCase();
  if (lower.startsWith(`${core}:`)) return { rest: text.slice(core.length + 1) };
  for (const schema of RESOURCE_SCHEMAS[kind].extensions) {
    const urn = schema.id.toLowerCase();
    if (lower === urn) return { extension: schema.id, rest: '' };
    if (lower.startsWith(`${urn}:`))
      return { extension: schema.id, rest: text.slice(urn.length + 1) };
  }
  return { rest: text };
}

/**
 * Resolves a path of the resource type; `within` resolves a path inside a multi-valued
 * attribute's filter (`emails[type eq "work"]`: `type` is a sub-attribute of emails).
 */
export function resolvePath(kind: ResourceKind, text: string, within?: Attribute): AttributePath {
  if (within) {
    const sub = findAttribute(within.subAttributes ?? [], text);
    return { name: sub?.name ?? text, attribute: sub };
  }
  const { extension, rest } = splitUrn(kind, text);
  const [first = '', second] = splitDot(rest);
  const attributes = extension
    ? (findExtension(kind, extension)?.attributes ?? [])
    : coreAttributes(kind);
  const attribute = findAttribute(attributes, first);
  const subAttribute =
    second === undefined ? undefined : findAttribute(attribute?.subAttributes ?? [], second);
  return {
    ...(extension ? { extension } : {}),
    name: attribute?.name ?? first,
    ...(second === undefined ? {} : { sub: subAttribute?.name ?? second }),
    ...(attribute ? { attribute } : {}),
    ...(subAttribute ? { subAttribute } : {}),
  };
}

/** `name.givenName` → [name, givenName]; a `$ref` holds no dot to split at. */
function splitDot(text: string): [string, string?] {
  const dot = text.indexOf('.');
  return dot < 0 ? [text] : [text.slice(0, dot), text.slice(dot + 1)];
}

/** The attribute the path's values have: the sub-attribute's when it names one. */
export function leafAttribute(path: AttributePath): Attribute | undefined {
  return path.sub === undefined ? path.attribute : path.subAttribute;
}

/** The object holding the path's attribute: the resource or its extension's part. */
export function holderOf(resource: JsonObject, path: AttributePath): JsonObject | undefined {
  if (!path.extension) return resource;
  const part = resource[path.extension];
  return isObject(part) ? part : undefined;
}

/**
 * The values at the path, flattened over a multi-valued attribute: `emails.value` gives every
 * email's value; `emails` alone gives each email's `value` (RFC 7644 §3.4.2.2).
 */
export function valuesAt(resource: JsonObject, path: AttributePath): Json[] {
  const holder = holderOf(resource, path);
  const value = holder?.[path.name];
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  if (path.sub === undefined) {
    return items.map((item) => (isObject(item) && 'value' in item ? item.value! : item));
  }
  return items.flatMap((item) => {
    if (!isObject(item)) return [];
    const sub = item[path.sub!];
    if (sub === undefined || sub === null) return [];
    return Array.isArray(sub) ? sub : [sub];
  });
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
