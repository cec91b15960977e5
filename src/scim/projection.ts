/**
 * `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5): which attributes an answer holds.
 * `id` and `schemas` are always returned; a write-only attribute (password) never is. A value
 * filter in the list (`emails[type eq "work"]`) asks for the attribute.
 */
import { isObject, resolvePath, type AttributePath, type JsonObject } from './attribute-path.js';
import type { ResourceKind } from './resource-schemas.js';

export interface Projection {
  attributes?: string;
  excludedAttributes?: string;
}

function paths(kind: ResourceKind, list: string): AttributePath[] {
  return splitList(list)
    .map((item) => item.replace(/\[.*\]/s, ''))
    .filter((item) => item !== '')
    .map((item) => resolvePath(kind, item));
}

/** Splits at commas outside brackets and quotes. */
function splitList(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (const char of list) {
    if (char === '"') quoted = !quoted;
    if (!quoted && char === '[') depth++;
    if (!quoted && char === ']') depth = Math.max(0, depth - 1);
    if (char === ',' && depth === 0 && !quoted) {
      out.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  out.push(current.trim());
  return out;
}

/** The resource as the projection asks; never changes the input. */
export function project(
  kind: ResourceKind,
  resource: JsonObject,
  projection: Projection,
): JsonObject {
  const { password: _password, ...rest } = resource;
  if (projection.attributes) {
    const out: JsonObject = { schemas: rest.schemas ?? [], id: rest.id ?? null };
    for (const path of paths(kind, projection.attributes)) copy(rest, out, path);
    if (rest.id === undefined) delete out.id;
    return out;
  }
  if (projection.excludedAttributes) {
    const out = structuredClone(rest);
    for (const path of paths(kind, projection.excludedAttributes)) {
      if (path.extension === undefined && (path.name === 'id' || path.name === 'schemas')) continue;
      remove(out, path);
    }
    return out;
  }
  return rest;
}

function copy(from: JsonObject, to: JsonObject, path: AttributePath): void {
  const source = path.extension ? from[path.extension] : from;
  if (!isObject(source) || source[path.name] === undefined) return;
  let target = to;
  if (path.extension) {
    const part = isObject(to[path.extension]) ? (to[path.extension] as JsonObject) : {};
    to[path.extension] = part;
    target = part;
  }
  const value = source[path.name]!;
  if (path.sub === undefined) {
    target[path.name] = structuredClone(value);
    return;
  }
  if (Array.isArray(value)) {
    target[path.name] = value.map((item) =>
      isObject(item) && item[path.sub!] !== undefined ? { [path.sub!]: item[path.sub!]! } : {},
    );
  } else if (isObject(value) && value[path.sub] !== undefined) {
    const part = isObject(target[path.name]) ? (target[path.name] as JsonObject) : {};
    part[path.sub] = value[path.sub]!;
    target[path.name] = part;
  }
}

function remove(resource: JsonObject, path: AttributePath): void {
  const holder = path.extension ? resource[path.extension] : resource;
  if (!isObject(holder)) return;
  if (path.sub === undefined) {
    delete holder[path.name];
    return;
  }
  const value = holder[path.name];
  for (const item of Array.isArray(value) ? value : [value]) {
    if (isObject(item)) delete item[path.sub];
  }
}
