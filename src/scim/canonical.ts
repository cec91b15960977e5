/**
 * A SCIM resource as a client sent it, in canonical form: attribute names spelt as the schema
 * spells them (`Emails[].Primary` → `emails[].primary`, `Department` → `department`), `"True"` and
 * `"False"` read as booleans, a single value of a multi-valued attribute made a list, a bare
 * text where a complex attribute belongs read as its `value` (`"manager": "id"`, `"members":
 * "id"`). Attributes no schema defines are left out, as RFC 7644 §3.3 lets a server do.
 */
import { isObject, type Json, type JsonObject } from './attribute-path.js';
import {
  coreAttributes,
  findAttribute,
  findExtension,
  type Attribute,
  type ResourceKind,
} from './resource-schemas.js';
import { scimInvalid } from './scim-error.js';

export interface CanonicalOptions {
  /** Leave out what a client may not set (id, meta, a user's groups). @defaultValue false */
  writable?: boolean;
}

/** The resource in canonical form; PORTER_SCIM_INVALID when it is not a JSON object. */
export function canonicalResource(
  kind: ResourceKind,
  input: unknown,
  options: CanonicalOptions = {},
): JsonObject {
  if (!isObject(input)) throw scimInvalid('invalidSyntax', 'the body must be a JSON object');
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(input)) {
    if (key.toLowerCase() === 'schemas') {
      if (Array.isArray(value)) out.schemas = value.filter((item) => typeof item === 'string');
      continue;
    }
    const extension = findExtension(kind, key);
    if (extension) {
      if (!isObject(value)) continue;
      const part: JsonObject = {};
      for (const [name, item] of Object.entries(value)) {
        const attribute = findAttribute(extension.attributes, name);
        if (attribute && keep(attribute, options))
          part[attribute.name] = canonicalValue(attribute, item);
      }
      out[extension.id] = part;
      continue;
    }
    const attribute = findAttribute(coreAttributes(kind), key);
    if (attribute && keep(attribute, options))
      out[attribute.name] = canonicalValue(attribute, value);
  }
  return out;
}

function keep(attribute: Attribute, options: CanonicalOptions): boolean {
  return !options.writable || attribute.mutability !== 'readOnly';
}

/** One attribute's value in canonical form; PORTER_SCIM_INVALID (invalidValue) when it cannot be. */
export function canonicalValue(attribute: Attribute, value: unknown): Json {
  if (value === null || value === undefined) return null;
  if (attribute.multiValued) {
    const items = Array.isArray(value) ? value : [value];
    return items.filter((item) => item !== null).map((item) => single(attribute, item));
  }
  return single(attribute, value);
}

function single(attribute: Attribute, value: unknown): Json {
  switch (attribute.type) {
    case 'complex':
      return complex(attribute, value);
    case 'boolean':
      return booleanOf(attribute, value);
    case 'integer':
      if (typeof value === 'number' && Number.isInteger(value)) return value;
      if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value);
      throw invalidValue(attribute, value);
    default:
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      throw invalidValue(attribute, value);
  }
}

function complex(attribute: Attribute, value: unknown): Json {
  const subs = attribute.subAttributes ?? [];
  if (!isObject(value)) {
    const valueSub = findAttribute(subs, 'value');
    if (valueSub && (typeof value === 'string' || typeof value === 'number')) {
      return { value: String(value) };
    }
    throw invalidValue(attribute, value);
  }
  const out: JsonObject = {};
  for (const [name, item] of Object.entries(value)) {
    // Microsoft's clients name a member's display `displayName`
    const sub =
      findAttribute(subs, name) ??
      (name.toLowerCase() === 'displayname' ? findAttribute(subs, 'display') : undefined);
    if (sub && item !== undefined) out[sub.name] = item === null ? null : single(sub, item);
  }
  return out;
}

/** true and false, and the texts "true" and "false" in any case (Entra sends "False"). */
export function booleanOf(attribute: Attribute, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^\s*(true|false)\s*$/i.test(value)) {
    return value.trim().toLowerCase() === 'true';
  }
  throw invalidValue(attribute, value);
}

function invalidValue(attribute: Attribute, value: unknown): Error {
  const shown = JSON.stringify(value) ?? String(value);
  return scimInvalid(
    'invalidValue',
    `${attribute.name}: ${shown.length > 80 ? `${shown.slice(0, 80)}…` : shown} is not a ${attribute.type === 'complex' ? 'complex value' : attribute.type}`,
  );
}
