/** The keys a record is known by: the one results are reported under, and the one answers are matched by. */
import type { ResourceName } from '../admin/resources.js';

/** The key that matches a record sent with the record the server answered: ACLs by groupId and name. */
export function matchKey(resource: ResourceName, record: Record<string, unknown>): string {
  if (resource === 'acls') return `${String(record.groupId ?? '')}:${String(record.name ?? '')}`;
  return naturalKey(resource, record);
}

/** The key a result is reported under: username, group name, or ACL id / groupId:name. */
export function naturalKey(resource: ResourceName, record: Record<string, unknown>): string {
  if (resource === 'users') return String(record.username ?? '');
  if (resource === 'groups') return String(record.name ?? '');
  if (typeof record.id === 'string' && record.id !== '') return record.id;
  return `${String(record.groupId ?? '')}:${String(record.name ?? '')}`;
}
