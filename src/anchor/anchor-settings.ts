/**
 * A mapping's anchor: the source's own immutable id of each record (HR's employee number, LDAP's
 * entryUUID, SCIM's externalId), how a DAM record that has none yet is joined, and whether a
 * person who is not active is ever created (docs/mapping.md#anchors).
 */

/** How a DAM record without an anchor is recognised as a row's, once; its anchor is written then. */
export type JoinRule = 'username' | 'email' | 'none';
export const JOIN_RULES: readonly JoinRule[] = ['username', 'email', 'none'];

/** The `substitutionMap` key (users) and description tag (groups) the anchor is kept under. */
export const DEFAULT_ANCHOR_KEY = 'porterAnchor';

export interface AnchorSettings {
  /** JSONata expression over the row giving its anchor (text; a number is written as text). */
  expression: string;
  /** Where the anchor is kept in the DAM record. @defaultValue 'porterAnchor' */
  key: string;
  /** How a DAM record without an anchor is joined. @defaultValue 'username' */
  join: JoinRule;
  /** Whether a row that would create a user who is not Active creates it. @defaultValue false */
  createInactive: boolean;
}

/** The anchor's text: a string trimmed, a finite number as text; anything else is no anchor. */
export function anchorText(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}
