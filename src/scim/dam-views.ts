/**
 * DAM records as SCIM resources: the DAM's fields over what SCIM last sent (shadow-store.ts),
 * so a field changed in the DAM shows, and an attribute the DAM has no field for comes back as
 * it was sent. The `id` is the DAM's userId or group id: it survives renames.
 */
import type { GroupRecord, UserRecord } from '../admin/schemas.js';
import { groupAnchor, userAnchor } from './anchor-placement.js';
import { isObject, type Json, type JsonObject } from './attribute-path.js';
import { versionOf } from './etag.js';
import {
  ENTERPRISE_SCHEMA,
  GROUP_SCHEMA,
  USER_SCHEMA,
  withoutWriteOnly,
} from './resource-schemas.js';
import type { Shadow } from './shadow-store.js';

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** Sets the primary (else first) element's value of a multi-valued attribute to the DAM's. */
function primaryValue(resource: JsonObject, name: string, value: string): void {
  const list = (Array.isArray(resource[name]) ? (resource[name] as Json[]) : []).filter(isObject);
  if (list.some((item) => item.value === value)) return;
  const chosen =
    list.find((item) => item.primary === true) ??
    list.find((item) => item.type === 'work') ??
    list[0];
  if (chosen) chosen.value = value;
  else list.push({ value, type: 'work', primary: true });
  resource[name] = list;
}

function withMeta(
  resource: JsonObject,
  type: 'User' | 'Group',
  location: string,
  shadow?: Shadow,
): JsonObject {
  const meta: JsonObject = { resourceType: type, location };
  if (shadow) {
    meta.created = shadow.created;
    meta.lastModified = shadow.lastModified;
  }
  meta.version = versionOf(resource);
  return { ...resource, meta };
}

export function userResource(
  user: UserRecord,
  shadow: Shadow | undefined,
  groupNames: ReadonlyMap<number, string>,
  base: string,
): JsonObject {
  // a password kept by an earlier version is never part of the view (nor a filter's match)
  const resource: JsonObject = withoutWriteOnly('User', structuredClone(shadow?.resource ?? {}));
  delete resource.groups;
  const schemas = new Set(Array.isArray(resource.schemas) ? (resource.schemas as string[]) : []);
  schemas.add(USER_SCHEMA);
  const id = String(user.userId);
  resource.id = id;
  resource.userName = user.username ?? '';
  const name = isObject(resource.name) ? resource.name : {};
  if (nonEmpty(user.firstName)) name.givenName = user.firstName;
  if (nonEmpty(user.middleName)) name.middleName = user.middleName;
  if (nonEmpty(user.lastName)) name.familyName = user.lastName;
  if (Object.keys(name).length > 0) resource.name = name;
  if (nonEmpty(user.email)) primaryValue(resource, 'emails', user.email);
  if (nonEmpty(user.phone)) primaryValue(resource, 'phoneNumbers', user.phone);
  if (nonEmpty(user.position)) resource.title = user.position;
  if (nonEmpty(user.dept) || nonEmpty(user.company)) {
    const part = isObject(resource[ENTERPRISE_SCHEMA])
      ? (resource[ENTERPRISE_SCHEMA] as JsonObject)
      : {};
    if (nonEmpty(user.dept)) part.department = user.dept;
    if (nonEmpty(user.company)) part.organization = user.company;
    resource[ENTERPRISE_SCHEMA] = part;
  }
  if (isObject(resource[ENTERPRISE_SCHEMA])) schemas.add(ENTERPRISE_SCHEMA);
  resource.active = user.status !== 'Locked';
  const anchor = userAnchor(user);
  if (anchor !== undefined) resource.externalId = anchor;
  const groups = user.groups ?? [];
  if (groups.length > 0) {
    resource.groups = groups.map((groupId) => ({
      value: String(groupId),
      $ref: `${base}/Groups/${groupId}`,
      display: groupNames.get(groupId) ?? String(groupId),
      type: 'direct',
    }));
  }
  resource.schemas = [...schemas];
  return withMeta(resource, 'User', `${base}/Users/${id}`, shadow);
}

export function groupResource(
  group: GroupRecord,
  shadow: Shadow | undefined,
  userNames: ReadonlyMap<number, string>,
  base: string,
): JsonObject {
  const resource: JsonObject = structuredClone(shadow?.resource ?? {});
  const id = String(group.id);
  const sentDisplay = new Map<string, Json>();
  for (const member of Array.isArray(resource.members) ? resource.members : []) {
    if (isObject(member) && typeof member.value === 'string' && member.display !== undefined) {
      sentDisplay.set(member.value, member.display);
    }
  }
  resource.schemas = [GROUP_SCHEMA];
  resource.id = id;
  resource.displayName = group.name ?? '';
  const anchor = groupAnchor(group);
  if (anchor !== undefined) resource.externalId = anchor;
  const members = group.users ?? [];
  if (members.length > 0) {
    resource.members = members.map((userId) => {
      const value = String(userId);
      return {
        value,
        $ref: `${base}/Users/${value}`,
        display: sentDisplay.get(value) ?? userNames.get(userId) ?? value,
        type: 'User',
      };
    });
  } else {
    delete resource.members;
  }
  return withMeta(resource, 'Group', `${base}/Groups/${id}`, shadow);
}
