/**
 * A target's fingerprint: a short hash of where it points and who porter is there. A job
 * records its target's fingerprint when it is submitted; a worker whose configuration of that
 * name gives another fingerprint refuses the job (PORTER_TARGET_CHANGED) rather than write to
 * a server its operator did not name. No secret goes into it: an API key counts by where it is
 * read from, a user by name.
 */
import { createHash } from 'node:crypto';
import type { SecretSource } from './target-file.js';

export interface AuthIdentity {
  auth: string;
  user?: string;
  apiKey?: SecretSource;
}

/** The URL as the client uses it: origin and path, no credentials, no trailing slash. */
function canonicalUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host.toLowerCase()}${parsed.pathname.replace(/\/+$/, '')}`;
}

export function targetFingerprint(url: string, identity: AuthIdentity): string {
  const source = identity.apiKey
    ? 'env' in identity.apiKey
      ? `env:${identity.apiKey.env}`
      : `file:${identity.apiKey.file}`
    : '';
  const text = JSON.stringify([canonicalUrl(url), identity.auth, identity.user ?? '', source]);
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
