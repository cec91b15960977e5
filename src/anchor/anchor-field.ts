/**
 * Where a record's anchor is kept in the DAM record itself, so it survives the loss of porter's
 * Redis and travels with exports and migrations:
 *
 * - a user: `substitutionMap[key]` (key `porterAnchor` unless the mapping names another);
 * - a group, whose record has no substitutionMap (spec 2.2): a tag `[key:VALUE]` at the end of its
 *   `description`, the one free text field of a group that the interface reads back as written
 *   and that the product gives no meaning of its own (`ldapDn` links the group to the product's
 *   own LDAP, and `loginText` is shown at sign-in).
 */
import type { ResourceName } from '../admin/resources.js';
import { anchorText } from './anchor-settings.js';

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The tag a group's description ends with, and its value when `description` carries one. */
function groupTag(key: string): RegExp {
  return new RegExp(`\\s*\\[${escapeRegex(key)}:([^\\]]*)\\]\\s*$`);
}

/** Whether the anchor can be kept in this resource's records (a group's tag holds no `]`). */
export function anchorProblem(resource: ResourceName, anchor: string): string | undefined {
  if (resource === 'groups' && /[\]\n\r]/.test(anchor)) {
    return 'a group anchor cannot hold "]" or a line break (it is kept in the description)';
  }
  return undefined;
}

/** The anchor a DAM record holds, or undefined. */
export function readAnchor(
  resource: ResourceName,
  record: Record<string, unknown>,
  key: string,
): string | undefined {
  if (resource === 'users') {
    const map = record.substitutionMap;
    if (typeof map !== 'object' || map === null || Array.isArray(map)) return undefined;
    return Object.hasOwn(map, key) ? anchorText((map as Record<string, unknown>)[key]) : undefined;
  }
  if (resource === 'groups') {
    const description = record.description;
    if (typeof description !== 'string') return undefined;
    return anchorText(groupTag(key).exec(description)?.[1]);
  }
  return undefined;
}

/** A group's description without its anchor tag. */
export function descriptionWithoutAnchor(description: string, key: string): string {
  return description.replace(groupTag(key), '');
}

/**
 * Writes `anchor` into `record` (an upload's record, about to be planned), keeping what the
 * record carries: a user's other substitutionMap entries, a group's description text. `current`
 * is the DAM record it will be laid over, when there is one: a user's substitutionMap the record
 * does not carry, and a group's description, are taken from it (a PUT overwrites the whole record).
 */
export function writeAnchor(
  resource: ResourceName,
  record: Record<string, unknown>,
  anchor: string,
  key: string,
  current?: Record<string, unknown>,
): void {
  if (resource === 'users') {
    const own = record.substitutionMap;
    const base =
      typeof own === 'object' && own !== null && !Array.isArray(own)
        ? own
        : (current?.substitutionMap as Record<string, unknown> | undefined);
    record.substitutionMap = { ...(base ?? {}), [key]: anchor };
    return;
  }
  if (resource === 'groups') {
    const text =
      typeof record.description === 'string'
        ? record.description
        : typeof current?.description === 'string'
          ? current.description
          : '';
    const kept = descriptionWithoutAnchor(text, key);
    record.description = `${kept}${kept === '' ? '' : ' '}[${key}:${anchor}]`;
  }
}
