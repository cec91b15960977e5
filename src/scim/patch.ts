/**
 * SCIM PATCH (RFC 7644 §3.5.2): a PatchOp's operations applied, in order, to a resource in
 * canonical form, giving the new resource; nothing is sent anywhere. It takes the forms
 * identity providers send, Entra ID's before and after its `aadOptscim062020` flag alike: `op`
 * in any case; attribute names in any case; `"True"`/`"False"` for booleans; a path with a value
 * filter (`members[value eq "…"]`, `emails[type eq "work"].value`); member removal as a `value`
 * list under the path `members`; several attributes replaced at once without a path, their
 * names being paths themselves (`{"name.givenName": "…", "urn:…:User:department": "…"}`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { canonicalValue } from './canonical.js';
import {
  isObject,
  resolvePath,
  type AttributePath,
  type Json,
  type JsonObject,
} from './attribute-path.js';
import { matches, parseFilter, type Filter } from './filter.js';
import { findExtension, type Attribute, type ResourceKind } from './resource-schemas.js';
import { scimInvalid } from './scim-error.js';

export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export type PatchVerb = 'add' | 'replace' | 'remove';

export interface PatchOperation {
  op: PatchVerb;
  path?: string;
  value?: unknown;
}

/** Most operations one PATCH may carry. */
export const MAX_PATCH_OPERATIONS = 1000;

/**
 * Most values of multi-valued attributes (a group's members) one PATCH may walk, all its
 * operations together: each operation walks the whole list it changes, so 1000 operations on a
 * list of 200,000 members took over a minute of the API's one thread. Under a second at most
 * (40 operations on a 50,000-member group).
 */
export const MAX_PATCH_WORK = 2_000_000;

/** What is left of a PATCH's MAX_PATCH_WORK (of a /Bulk's, for all its PATCH operations). */
class PatchWork {
  private left = MAX_PATCH_WORK;

  spend(values: number): void {
    this.left -= values;
    if (this.left < 0) {
      throw scimInvalid(
        'tooMany',
        `this PATCH would walk more than ${MAX_PATCH_WORK} values of multi-valued attributes; send its operations in several requests`,
      );
    }
  }
}

const sharedWork = new AsyncLocalStorage<PatchWork>();

/**
 * Runs `task` with one MAX_PATCH_WORK for every PATCH applied within it: a /Bulk of 1000 PATCH
 * operations walks no more than one PATCH may.
 */
export function withSharedPatchWork<T>(task: () => Promise<T>): Promise<T> {
  return sharedWork.run(new PatchWork(), task);
}

/** The operations of a PatchOp body; PORTER_SCIM_INVALID when it is not one. */
export function readPatchOperations(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw scimInvalid('invalidSyntax', 'the body must be a PatchOp object');
  const key = Object.keys(body).find((name) => name.toLowerCase() === 'operations');
  const list = key === undefined ? undefined : body[key];
  if (!Array.isArray(list) || list.length === 0) {
    throw scimInvalid('invalidSyntax', 'a PatchOp needs a non-empty "Operations" list');
  }
  if (list.length > MAX_PATCH_OPERATIONS) {
    throw scimInvalid('tooMany', `a PatchOp may carry at most ${MAX_PATCH_OPERATIONS} operations`);
  }
  return list.map((item, index) => {
    if (!isObject(item))
      throw scimInvalid('invalidSyntax', `Operations[${index}] is not an object`);
    const field = (name: string): Json | undefined => {
      const found = Object.keys(item).find((k) => k.toLowerCase() === name);
      return found === undefined ? undefined : item[found];
    };
    const op = String(field('op') ?? '').toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove') {
      throw scimInvalid(
        'invalidSyntax',
        `Operations[${index}].op: "${String(field('op'))}" is not add, replace or remove`,
      );
    }
    const path = field('path');
    if (path !== undefined && path !== null && typeof path !== 'string') {
      throw scimInvalid('invalidPath', `Operations[${index}].path must be a text`);
    }
    const value = field('value');
    return {
      op,
      ...(typeof path === 'string' && path.trim() !== '' ? { path: path.trim() } : {}),
      ...(value === undefined ? {} : { value }),
    };
  });
}

/** The resource after the operations; the input is not changed. */
export function applyPatch(
  kind: ResourceKind,
  resource: JsonObject,
  operations: readonly PatchOperation[],
): JsonObject {
  const result = structuredClone(resource);
  const work = sharedWork.getStore() ?? new PatchWork();
  for (const operation of operations) applyOne(kind, result, operation, work);
  return result;
}

function applyOne(
  kind: ResourceKind,
  resource: JsonObject,
  operation: PatchOperation,
  work: PatchWork,
): void {
  if (operation.path !== undefined) {
    applyAtPath(kind, resource, operation.op, operation.path, operation.value, work);
    return;
  }
  if (operation.op === 'remove') throw scimInvalid('noTarget', 'a remove needs a path');
  if (!isObject(operation.value)) {
    throw scimInvalid('invalidValue', `an ${operation.op} without a path needs an object value`);
  }
  for (const [name, value] of Object.entries(operation.value)) {
    const extension = findExtension(kind, name);
    if (extension && isObject(value)) {
      for (const [sub, item] of Object.entries(value)) {
        applyAtPath(kind, resource, operation.op, `${extension.id}:${sub}`, item, work);
      }
    } else if (name.toLowerCase() !== 'schemas') {
      applyAtPath(kind, resource, operation.op, name, value, work);
    }
  }
}

interface ParsedPath {
  path: AttributePath;
  filter?: Filter;
  /** The sub-attribute after a value filter: `emails[type eq "work"].value` → value. */
  sub?: string;
  subAttribute?: Attribute;
}

function parsePatchPath(kind: ResourceKind, text: string): ParsedPath {
  const open = text.indexOf('[');
  if (open < 0) return { path: resolvePath(kind, text) };
  const close = text.lastIndexOf(']');
  if (close < open) throw scimInvalid('invalidPath', `path "${text}": "[" is not closed`);
  const path = resolvePath(kind, text.slice(0, open));
  const attribute = path.attribute;
  if (!attribute?.multiValued || attribute.type !== 'complex') {
    throw scimInvalid(
      'invalidPath',
      `path "${text}": a value filter needs a multi-valued attribute`,
    );
  }
  const filter = parseFilter(text.slice(open + 1, close), kind, attribute);
  const after = text.slice(close + 1);
  if (after !== '' && !after.startsWith('.')) {
    throw scimInvalid('invalidPath', `path "${text}": expected ".sub-attribute" after "]"`);
  }
  const subName = after.slice(1);
  const subAttribute = subName
    ? attribute.subAttributes?.find((sub) => sub.name.toLowerCase() === subName.toLowerCase())
    : undefined;
  return {
    path,
    filter,
    ...(subName
      ? { sub: subAttribute?.name ?? subName, ...(subAttribute ? { subAttribute } : {}) }
      : {}),
  };
}

function holder(
  resource: JsonObject,
  path: AttributePath,
  create: boolean,
): JsonObject | undefined {
  if (!path.extension) return resource;
  const part = resource[path.extension];
  if (isObject(part)) return part;
  if (!create) return undefined;
  const made: JsonObject = {};
  resource[path.extension] = made;
  const schemas = Array.isArray(resource.schemas) ? resource.schemas : [];
  if (!schemas.includes(path.extension)) resource.schemas = [...schemas, path.extension];
  return made;
}

function applyAtPath(
  kind: ResourceKind,
  resource: JsonObject,
  op: PatchVerb,
  text: string,
  value: unknown,
  work: PatchWork,
): void {
  const parsed = parsePatchPath(kind, text);
  const { path } = parsed;
  const attribute = path.attribute;
  // an attribute no schema defines is left out, as a create or a replace leaves it out
  if (!attribute) return;
  if (attribute.mutability === 'readOnly') {
    throw scimInvalid('mutability', `path "${text}": ${attribute.name} is read-only`);
  }
  if (attribute.multiValued) {
    // the list as it is and the values given: what this operation walks
    const current = holder(resource, path, false)?.[attribute.name];
    work.spend(
      (Array.isArray(current) ? current.length : 0) + (Array.isArray(value) ? value.length : 1),
    );
  }
  if (parsed.filter) {
    applyFiltered(resource, op, parsed, attribute, value);
    return;
  }
  const target = holder(resource, path, op !== 'remove');
  if (!target) return;
  if (path.sub !== undefined) {
    applySub(target, op, path, attribute, value);
    return;
  }
  if (op === 'remove') {
    if (attribute.multiValued && value !== undefined && value !== null) {
      removeListed(target, attribute, value);
    } else {
      delete target[attribute.name];
    }
    return;
  }
  const given = canonicalValue(attribute, value);
  if (attribute.multiValued) {
    const items = Array.isArray(given) ? given : [];
    const current = Array.isArray(target[attribute.name]) ? (target[attribute.name] as Json[]) : [];
    target[attribute.name] = op === 'replace' ? dedupe(items) : dedupe([...current, ...items]);
    return;
  }
  if (attribute.type === 'complex' && isObject(given) && isObject(target[attribute.name])) {
    target[attribute.name] = { ...(target[attribute.name] as JsonObject), ...given };
    return;
  }
  target[attribute.name] = given;
}

/** `name.givenName`, `emails.value`: a sub-attribute of a complex attribute. */
function applySub(
  target: JsonObject,
  op: PatchVerb,
  path: AttributePath,
  attribute: Attribute,
  value: unknown,
): void {
  const sub = path.subAttribute;
  if (!sub) return;
  const current = target[attribute.name];
  const items: JsonObject[] = attribute.multiValued
    ? (Array.isArray(current) ? current : []).filter(isObject)
    : isObject(current)
      ? [current]
      : [];
  if (op === 'remove') {
    for (const item of items) delete item[sub.name];
    return;
  }
  const given = canonicalValue(sub, value);
  if (items.length === 0) {
    const made: JsonObject = { [sub.name]: given };
    target[attribute.name] = attribute.multiValued ? [made] : made;
    return;
  }
  for (const item of items) item[sub.name] = given;
}

/** `members[value eq "…"]`, `emails[type eq "work"].value`. */
function applyFiltered(
  resource: JsonObject,
  op: PatchVerb,
  parsed: ParsedPath,
  attribute: Attribute,
  value: unknown,
): void {
  const target = holder(resource, parsed.path, op !== 'remove');
  if (!target) return;
  const list = (
    Array.isArray(target[attribute.name]) ? (target[attribute.name] as Json[]) : []
  ).filter(isObject);
  const hit = (item: JsonObject): boolean => matches(parsed.filter!, item);
  if (op === 'remove') {
    if (parsed.sub === undefined) {
      target[attribute.name] = list.filter((item) => !hit(item));
    } else {
      for (const item of list.filter(hit)) delete item[parsed.sub];
    }
    return;
  }
  const given =
    parsed.sub === undefined
      ? canonicalValue({ ...attribute, multiValued: false }, value)
      : parsed.subAttribute
        ? canonicalValue(parsed.subAttribute, value)
        : undefined;
  if (given === undefined) return;
  const chosen = list.filter(hit);
  if (chosen.length === 0) {
    // Entra replaces `emails[type eq "work"].value` on a user who has no work email yet: the
    // element the filter describes is made (RFC 7644 would answer noTarget)
    const made = elementOf(parsed.filter!);
    if (parsed.sub === undefined) Object.assign(made, isObject(given) ? given : { value: given });
    else made[parsed.sub] = given;
    target[attribute.name] = [...list, made];
    return;
  }
  for (const item of chosen) {
    if (parsed.sub !== undefined) item[parsed.sub] = given;
    else if (isObject(given)) Object.assign(item, given);
  }
  target[attribute.name] = list;
}

/** The element a filter of `eq` comparisons describes: `type eq "work"` → { type: "work" }. */
function elementOf(filter: Filter): JsonObject {
  if (filter.kind === 'compare' && filter.op === 'eq') return { [filter.path.name]: filter.value };
  if (filter.kind === 'and') return { ...elementOf(filter.left), ...elementOf(filter.right) };
  throw scimInvalid(
    'noTarget',
    "no element matches the path's filter, and it does not describe one",
  );
}

/** Entra's removal of members by a `value` list under the path `members`. */
function removeListed(target: JsonObject, attribute: Attribute, value: unknown): void {
  const given = canonicalValue(attribute, value);
  const gone = new Set(
    (Array.isArray(given) ? given : []).map((item) =>
      isObject(item) ? String(item.value) : String(item),
    ),
  );
  const current = Array.isArray(target[attribute.name]) ? (target[attribute.name] as Json[]) : [];
  target[attribute.name] = current.filter(
    (item) => !(isObject(item) && gone.has(String(item.value))),
  );
}

/** One element per `value` (a later one's other sub-attributes win); others as they come. */
function dedupe(items: Json[]): Json[] {
  const byValue = new Map<string, number>();
  const out: Json[] = [];
  for (const item of items) {
    if (isObject(item) && typeof item.value === 'string') {
      const seen = byValue.get(item.value);
      if (seen !== undefined) {
        out[seen] = { ...(out[seen] as JsonObject), ...item };
        continue;
      }
      byValue.set(item.value, out.length);
    }
    out.push(item);
  }
  return out;
}
