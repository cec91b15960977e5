/**
 * Where a SCIM `externalId` is kept in the DAM record: it is the record's anchor
 * (docs/mapping.md#anchors, src/anchor/anchor-field.ts), under the default key: a user's
 * `substitutionMap.porterAnchor`, a group's description tag `[porterAnchor:VALUE]`. Kept in the
 * DAM, it survives the loss of porter's Redis, and a file import with an anchor matches it.
 */
import type { GroupRecord, UserRecord } from '../admin/schemas.js';
import {
  anchorProblem,
  descriptionWithoutAnchor,
  readAnchor,
  writeAnchor,
} from '../anchor/anchor-field.js';
import { DEFAULT_ANCHOR_KEY } from '../anchor/anchor-settings.js';

/** The substitutionMap key and description tag the anchor is kept under. */
export const ANCHOR_KEY = DEFAULT_ANCHOR_KEY;

export function userAnchor(user: UserRecord): string | undefined {
  return readAnchor('users', user as Record<string, unknown>, ANCHOR_KEY);
}

/** The user's substitutionMap with the anchor set (or removed when undefined). */
export function withUserAnchor(
  map: Record<string, unknown> | undefined,
  anchor: string | undefined,
): Record<string, unknown> {
  const { [ANCHOR_KEY]: _old, ...rest } = map ?? {};
  if (anchor === undefined) return rest;
  const record: Record<string, unknown> = { substitutionMap: rest };
  writeAnchor('users', record, anchor, ANCHOR_KEY);
  return record.substitutionMap as Record<string, unknown>;
}

export function groupAnchor(group: GroupRecord): string | undefined {
  return readAnchor('groups', group as Record<string, unknown>, ANCHOR_KEY);
}

/** The description with the anchor tag set (or removed when undefined, or when it cannot be kept). */
export function withGroupAnchor(
  description: string | undefined,
  anchor: string | undefined,
): string {
  const bare = descriptionWithoutAnchor(description ?? '', ANCHOR_KEY);
  if (anchor === undefined || anchorProblem('groups', anchor) !== undefined) return bare;
  const record: Record<string, unknown> = { description: bare };
  writeAnchor('groups', record, anchor, ANCHOR_KEY);
  return record.description as string;
}
