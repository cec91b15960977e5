/**
 * Versions (RFC 7644 §3.14): a resource's `meta.version` is a weak ETag of what it holds, so
 * it changes whenever the DAM record or the SCIM attributes change, whoever changed them.
 * `If-Match` with another version is PORTER_SCIM_VERSION_MISMATCH (412).
 */
import { createHash } from 'node:crypto';
import type { JsonObject } from './attribute-path.js';
import { PorterError } from '../errors/porter-error.js';

/** Stable JSON: keys sorted, so equal content gives one text. */
function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stable(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The version of a resource, its `meta` aside. */
export function versionOf(resource: JsonObject): string {
  const { meta: _meta, ...content } = resource;
  return `W/"${createHash('sha256').update(stable(content)).digest('base64url').slice(0, 22)}"`;
}

/** Throws PORTER_SCIM_VERSION_MISMATCH unless `ifMatch` is absent, `*`, or lists `version`. */
export function checkIfMatch(ifMatch: string | undefined, version: string): void {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const bare = (tag: string): string => tag.trim().replace(/^W\//, '');
  const wanted = ifMatch.split(',').map(bare);
  if (wanted.includes(bare(version))) return;
  throw new PorterError(
    'PORTER_SCIM_VERSION_MISMATCH',
    `If-Match ${ifMatch} is not the resource's version ${version}: read it again`,
    { details: { version } },
  );
}
