/** Reading the record an upload refers to, by its natural key (or an ACL's id). */
import type { ResourceName } from '../admin/resources.js';
import type { DirectoryView } from './directory-view.js';
import type { RecordLookup } from './lookup.js';

/** Reads the record the upload refers to, or undefined when there is none. */
export async function findCurrent(
  resource: ResourceName,
  record: Record<string, unknown>,
  lookup: DirectoryView,
): Promise<Record<string, unknown> | undefined> {
  if (resource === 'users') return lookup.user(String(record.username));
  if (resource === 'groups') return lookup.group(String(record.name));
  if (typeof record.id === 'string') return lookup.aclById(record.id);
  if (typeof record.groupId === 'number' && typeof record.name === 'string') {
    return lookup.aclByName(record.groupId, record.name);
  }
  return undefined;
}

/** Reads the record again from the server, past what this batch read before. */
export async function findFresh(
  resource: ResourceName,
  record: Record<string, unknown>,
  lookup: RecordLookup,
): Promise<Record<string, unknown> | undefined> {
  if (resource === 'users') return lookup.user(String(record.username), true);
  if (resource === 'groups') return lookup.group(String(record.name), true);
  if (typeof record.id === 'string') return lookup.aclById(record.id);
  if (typeof record.groupId === 'number' && typeof record.name === 'string') {
    return lookup.aclByName(record.groupId, record.name, true);
  }
  return undefined;
}
