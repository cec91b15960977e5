/**
 * Records as the per-resource files carry them: ready to import again, here or on another
 * server. References are names (users' `groups`, ACLs' `groupId`), because ids belong to one
 * server; a group's `users` is left out, because membership travels once, with the users.
 * Fields the spec does not know are left out, since an import would refuse them.
 */
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { nameReference } from '../plan/reference-rule.js';

export interface PortableOptions {
  /** The name of a group id, or undefined when no such group was found. */
  groupName(id: number): string | undefined | Promise<string | undefined>;
  /** CSV only: a name holding the list separator is written as its id. */
  listSeparator?: string;
  warn(message: string): void;
}

/** Fields of each resource in spec order; groups' `users` is carried by the users' `groups`. */
export const PORTABLE_FIELDS: { readonly [R in ResourceName]: readonly string[] } = {
  users: Object.keys(RESOURCES.users.fields),
  groups: Object.keys(RESOURCES.groups.fields).filter((field) => field !== 'users'),
  acls: Object.keys(RESOURCES.acls.fields),
};

const KNOWN: { readonly [R in ResourceName]: ReadonlySet<string> } = {
  users: new Set(Object.keys(RESOURCES.users.fields)),
  groups: new Set(Object.keys(RESOURCES.groups.fields)),
  acls: new Set(Object.keys(RESOURCES.acls.fields)),
};

/** Why a group's name cannot stand for it in a file; undefined when it can. */
function referenceProblem(
  name: string | undefined,
  listSeparator: string | undefined,
  inList: boolean,
): string | undefined {
  if (name === undefined) return 'was not among the groups read';
  if (name.trim() === '' || name !== name.trim()) return 'has spaces at its ends';
  if (inList && listSeparator !== undefined && name.includes(listSeparator)) {
    return `has "${listSeparator}" in its name, the list separator`;
  }
  return undefined;
}

/**
 * The reference a file carries for a group of this name, when the name can stand for it with
 * nothing to warn of (what groupReference writes then); undefined otherwise.
 */
export function plainGroupReference(
  name: string | undefined,
  listSeparator: string | undefined,
  inList: boolean,
): string | undefined {
  if (name === undefined || referenceProblem(name, listSeparator, inList) !== undefined) {
    return undefined;
  }
  return nameReference(name);
}

/**
 * What to write for a reference to group `id`: its name (`name:42` for a name an import would
 * read as an id), or the id itself when no name reads back as this group (unknown, spaces at
 * the ends, holds the separator).
 */
function groupReference(
  id: unknown,
  name: string | undefined,
  options: PortableOptions,
  inList: boolean,
): unknown {
  if (typeof id !== 'number') return id;
  const problem = referenceProblem(name, options.listSeparator, inList);
  if (name !== undefined && problem === undefined) return nameReference(name);
  const label = name === undefined ? `group ${id}` : `group ${JSON.stringify(name)} (id ${id})`;
  options.warn(`${label} ${problem}; referenced by its id, valid on this server only`);
  return id;
}

/** Names of group ids; a promise only when some name has to be looked up. */
function groupNames(
  ids: readonly unknown[],
  options: PortableOptions,
): (string | undefined)[] | Promise<(string | undefined)[]> {
  const names = ids.map((id) => (typeof id === 'number' ? options.groupName(id) : undefined));
  return names.some((name) => name instanceof Promise)
    ? Promise.all(names)
    : (names as (string | undefined)[]);
}

/**
 * Whether the record's keys are portable fields in their order, each with a value: then a
 * spread copy of it is what the field-by-field copy would give, at a fraction of the cost.
 */
function inPortableOrder(record: Readonly<Record<string, unknown>>, fields: readonly string[]) {
  let next = 0;
  for (const key in record) {
    while (next < fields.length && fields[next] !== key) next++;
    if (next === fields.length || record[key] === undefined) return false;
    next++;
  }
  return true;
}

/** The record's portable fields, in their order; fields the spec does not know are warned of. */
function portableFields(
  resource: ResourceName,
  record: Readonly<Record<string, unknown>>,
  options: PortableOptions,
): Record<string, unknown> {
  const fields = PORTABLE_FIELDS[resource];
  // the answers of a server in spec order take the quick way
  if (inPortableOrder(record, fields)) return { ...record };
  const known = KNOWN[resource];
  for (const field in record) {
    if (!known.has(field)) {
      options.warn(`${resource}: field "${field}" is not in the specification; left out`);
    }
  }
  const portable: Record<string, unknown> = {};
  for (const field of fields) {
    if (record[field] !== undefined) portable[field] = record[field];
  }
  return portable;
}

/** The portable record with its group ids replaced by their references. */
function withReferences(
  resource: ResourceName,
  portable: Record<string, unknown>,
  ids: readonly unknown[],
  names: readonly (string | undefined)[],
  options: PortableOptions,
): Record<string, unknown> {
  const inList = resource === 'users';
  const values: unknown[] = new Array(ids.length);
  for (let index = 0; index < ids.length; index++) {
    values[index] = groupReference(ids[index], names[index], options, inList);
  }
  if (resource === 'users') portable.groups = values;
  else portable.groupId = values[0];
  return portable;
}

/**
 * The record as a per-resource file carries it. Synchronous unless a group has to be looked up
 * (one created after the groups were read), so a million records cost no million promises.
 */
export function toPortable(
  resource: ResourceName,
  record: Readonly<Record<string, unknown>>,
  options: PortableOptions,
): Record<string, unknown> | Promise<Record<string, unknown>> {
  const portable = portableFields(resource, record, options);
  let ids: readonly unknown[] | undefined;
  if (resource === 'users' && Array.isArray(portable.groups)) ids = portable.groups;
  if (resource === 'acls' && portable.groupId !== undefined) ids = [portable.groupId];
  if (ids === undefined) return portable;
  const references = ids;
  const names = groupNames(references, options);
  return names instanceof Promise
    ? names.then((found) => withReferences(resource, portable, references, found, options))
    : withReferences(resource, portable, references, names, options);
}
