/**
 * A source read whole into rows for the mapping: users (their directory groups resolved, nested
 * groups flattened to the source's depth) or groups (their members resolved to user anchors).
 * Nothing is returned unless every page and every range was read; an incremental read asks
 * only for entries changed since a mark (creates and updates, never deletions).
 */
import type { Client, Entry } from 'ldapts';
import { closeSession, openSession } from './ldap-session.js';
import { pagedEntries } from './paged-search.js';
import { allValues } from './ranged-values.js';
import { attributeValues, dnKey, entryRow, type SourceRow } from './entry-row.js';
import type { LdapSource } from './sources.js';

export type SourceResource = 'users' | 'groups';

/** The column of a user row naming its groups (direct and through nesting). */
export const GROUPS_COLUMN = 'directoryGroups';
/** The column of a group row listing its members' anchors (direct and through nesting). */
export const MEMBERS_COLUMN = 'members';

export interface SourceRead {
  rows: SourceRow[];
  /** Entries read (the rows). */
  entries: number;
  /** The latest change time among the entries read (modifyTimestamp / whenChanged). */
  mark?: string;
  durationMs: number;
}

export interface ReadSourceOptions {
  /** Read only entries changed at or after this mark (an incremental read). */
  since?: string;
}

interface GroupNode {
  row: SourceRow;
  name?: string;
  anchor?: string;
  /** Member DNs, in the DN key form. */
  members: string[];
}

/** The source's rows of a resource, read whole; throws PORTER_SOURCE_FAILED otherwise. */
export async function readSource(
  source: LdapSource,
  resource: SourceResource,
  options: ReadSourceOptions = {},
): Promise<SourceRead> {
  const started = Date.now();
  const client = await openSession(source);
  try {
    const read =
      resource === 'users'
        ? await readUsers(client, source, options)
        : await readGroups(client, source, options);
    return { ...read, durationMs: Date.now() - started };
  } finally {
    await closeSession(client);
  }
}

function changedFilter(filter: string, source: LdapSource, since?: string): string {
  if (since === undefined) return filter;
  // a filter's value escapes ( ) * \ and NUL; a generalized time holds none of them
  return `(&${filter}(${source.changedAttribute}>=${since.replace(/[()*\\\0]/g, '')}))`;
}

function laterMark(mark: string | undefined, entry: Entry, attribute: string): string | undefined {
  const [value] = attributeValues(entry, attribute);
  return value !== undefined && (mark === undefined || value > mark) ? value : mark;
}

function anchorOf(entry: Entry, source: LdapSource): string | undefined {
  return attributeValues(entry, source.anchorAttribute)[0];
}

function buffersOf(source: LdapSource): string[] {
  return source.flavor === 'ad' ? ['objectGUID'] : [];
}

async function readUsers(
  client: Client,
  source: LdapSource,
  options: ReadSourceOptions,
): Promise<Omit<SourceRead, 'durationMs'>> {
  const rowAttributes = unique([...source.attributes, source.anchorAttribute]);
  const rows: SourceRow[] = [];
  const keys: string[] = [];
  let mark: string | undefined;
  for await (const page of pagedEntries(client, source, {
    baseDN: source.baseDN,
    scope: source.scope,
    filter: changedFilter(source.filter, source, options.since),
    attributes: unique([...rowAttributes, source.changedAttribute]),
    buffers: buffersOf(source),
    pageSize: source.pageSize,
  })) {
    for (const entry of page) {
      rows.push(entryRow(entry, rowAttributes));
      keys.push(dnKey(entry.dn));
      mark = laterMark(mark, entry, source.changedAttribute);
    }
  }
  if (source.groups) {
    const groups = await readGroupNodes(client, source);
    const names = userGroupNames(groups, source.groups.nestingDepth);
    rows.forEach((row, index) => {
      row[GROUPS_COLUMN] = names.get(keys[index]!) ?? [];
    });
  }
  return { rows, entries: rows.length, mark };
}

async function readGroups(
  client: Client,
  source: LdapSource,
  options: ReadSourceOptions,
): Promise<Omit<SourceRead, 'durationMs'>> {
  // members are told by anchor: every user's DN → anchor first
  const anchors = new Map<string, string>();
  for await (const page of pagedEntries(client, source, {
    baseDN: source.baseDN,
    scope: source.scope,
    filter: source.filter,
    attributes: [source.anchorAttribute],
    buffers: buffersOf(source),
    pageSize: source.pageSize,
  })) {
    for (const entry of page) {
      const anchor = anchorOf(entry, source);
      if (anchor !== undefined) anchors.set(dnKey(entry.dn), anchor);
    }
  }
  const groups = await readGroupNodes(client, source, options.since);
  const all = options.since === undefined ? groups : await readGroupNodes(client, source);
  const depth = source.groups?.nestingDepth ?? 0;
  const rows: SourceRow[] = [];
  let mark: string | undefined;
  for (const [key, group] of groups) {
    const members = new Set<string>();
    for (const userKey of flattenedUsers(all, key, depth)) {
      const anchor = anchors.get(userKey);
      if (anchor !== undefined) members.add(anchor);
    }
    rows.push({ ...group.row, [MEMBERS_COLUMN]: [...members] });
    const changed = group.row[source.changedAttribute];
    if (typeof changed === 'string' && (mark === undefined || changed > mark)) mark = changed;
    delete group.row[source.changedAttribute];
  }
  for (const row of rows) delete row[source.changedAttribute];
  return { rows, entries: rows.length, mark };
}

/** Every group of the source with its members (all ranges read), by DN key. */
async function readGroupNodes(
  client: Client,
  source: LdapSource,
  since?: string,
): Promise<Map<string, GroupNode>> {
  const groups = new Map<string, GroupNode>();
  const settings = source.groups;
  if (!settings) return groups;
  const rowAttributes = unique([
    settings.nameAttribute,
    source.anchorAttribute,
    ...settings.attributes,
  ]);
  for await (const page of pagedEntries(client, source, {
    baseDN: settings.baseDN,
    scope: settings.scope,
    filter: changedFilter(settings.filter, source, since),
    attributes: unique([...rowAttributes, settings.memberAttribute, source.changedAttribute]),
    buffers: buffersOf(source),
    pageSize: source.pageSize,
  })) {
    for (const entry of page) {
      const members = await allValues(client, source, entry, settings.memberAttribute);
      const row = entryRow(entry, [...rowAttributes, source.changedAttribute]);
      groups.set(dnKey(entry.dn), {
        row,
        name: attributeValues(entry, settings.nameAttribute)[0],
        anchor: anchorOf(entry, source),
        members: members.map(dnKey),
      });
    }
  }
  return groups;
}

/**
 * The users of a group: its own members and those of the groups in it, down to `depth` levels
 * of nesting (0: its own members only). A cycle of groups ends where it began.
 */
function flattenedUsers(groups: Map<string, GroupNode>, key: string, depth: number): Set<string> {
  const users = new Set<string>();
  const seen = new Set<string>([key]);
  let level = [key];
  for (let nesting = 0; nesting <= depth && level.length > 0; nesting++) {
    const next: string[] = [];
    for (const groupKey of level) {
      for (const member of groups.get(groupKey)?.members ?? []) {
        if (groups.has(member)) {
          if (!seen.has(member)) {
            seen.add(member);
            next.push(member);
          }
        } else {
          users.add(member);
        }
      }
    }
    level = next;
  }
  return users;
}

/** Each user's group names (DN key → names), nesting flattened to `depth`. */
function userGroupNames(groups: Map<string, GroupNode>, depth: number): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const [key, group] of groups) {
    if (group.name === undefined) continue;
    for (const user of flattenedUsers(groups, key, depth)) {
      const list = names.get(user);
      if (list) list.push(group.name);
      else names.set(user, [group.name]);
    }
  }
  return names;
}

function unique(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.filter((name) => {
    const lower = name.toLowerCase();
    if (seen.has(lower)) return false;
    seen.add(lower);
    return true;
  });
}
