/**
 * What the admin interface reads back otherwise than it was written (spec 2.1 to 2.3, and
 * shared/spec/real-product-notes.md): the one place that knows these quirks. Planning, syncs,
 * answer checks, undo and diff all ask here, so a quirk is never a change, a failure or a
 * difference anywhere.
 *
 * - a user's `position` always reads back "", and `primaryGroup` is never returned;
 * - a group's `loadingDockType` out of the range 0–3 reads back 1;
 * - an ACL sent with no workspaces gets some from the server.
 */
import type { ResourceName } from './resources.js';

/** Fields the interface accepts and never reads back as written, per resource. */
export const NEVER_READ_BACK: { readonly [R in ResourceName]: ReadonlySet<string> } = {
  users: new Set(['position', 'primaryGroup']),
  groups: new Set(),
  acls: new Set(),
};

/** The range of loadingDockType kept as sent; other values read back as 1. */
export const LOADING_DOCK_TYPE_RANGE = [0, 3] as const;
export const LOADING_DOCK_TYPE_FALLBACK = 1;

/** Whether a field written with this value may read back as something else. */
export function readsBackOtherwise(resource: ResourceName, field: string, sent: unknown): boolean {
  if (NEVER_READ_BACK[resource].has(field)) return true;
  if (resource === 'groups') return field === 'loadingDockType';
  return resource === 'acls' && field === 'workspaces' && Array.isArray(sent) && sent.length === 0;
}

/**
 * Whether writing `sent` into a field that reads back `current` changes nothing the interface
 * shows: a field it never reads back, an ACL's empty workspaces (the server fills them), a
 * loadingDockType out of range over the 1 it reads back as.
 */
export function writeShowsNoChange(
  resource: ResourceName,
  field: string,
  current: unknown,
  sent: unknown,
): boolean {
  if (NEVER_READ_BACK[resource].has(field)) return true;
  if (resource === 'groups' && field === 'loadingDockType' && typeof sent === 'number') {
    const [min, max] = LOADING_DOCK_TYPE_RANGE;
    return (sent < min || sent > max) && current === LOADING_DOCK_TYPE_FALLBACK;
  }
  return resource === 'acls' && field === 'workspaces' && Array.isArray(sent) && sent.length === 0;
}
