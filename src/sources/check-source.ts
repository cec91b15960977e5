/** A live check of a source: connect, StartTLS, bind, count the entries in scope, and the time. */
import { isPorterError } from '../errors/porter-error.js';
import { closeSession, openSession } from './ldap-session.js';
import { pagedEntries } from './paged-search.js';
import type { LdapSource } from './sources.js';

export interface SourceCheck {
  name: string;
  url: string;
  ok: boolean;
  /** Why it failed (never a secret). */
  reason?: string;
  /** Users in scope (the source's filter), and groups when the source reads groups. */
  counts?: { users: number; groups?: number };
  durationMs: number;
}

async function count(
  client: Awaited<ReturnType<typeof openSession>>,
  source: LdapSource,
  baseDN: string,
  scope: 'sub' | 'one',
  filter: string,
): Promise<number> {
  let entries = 0;
  for await (const page of pagedEntries(client, source, {
    baseDN,
    scope,
    filter,
    attributes: ['1.1'],
    pageSize: source.pageSize,
  })) {
    entries += page.length;
  }
  return entries;
}

export async function checkSource(source: LdapSource): Promise<SourceCheck> {
  const started = Date.now();
  const base = { name: source.name, url: source.summary.url };
  if (source.problem) {
    return { ...base, ok: false, reason: source.problem, durationMs: 0 };
  }
  try {
    const client = await openSession(source);
    try {
      const users = await count(client, source, source.baseDN, source.scope, source.filter);
      const groups = source.groups
        ? await count(
            client,
            source,
            source.groups.baseDN,
            source.groups.scope,
            source.groups.filter,
          )
        : undefined;
      return {
        ...base,
        ok: true,
        counts: { users, ...(groups !== undefined ? { groups } : {}) },
        durationMs: Date.now() - started,
      };
    } finally {
      await closeSession(client);
    }
  } catch (error) {
    const reason = isPorterError(error) ? error.message : String(error);
    return { ...base, ok: false, reason, durationMs: Date.now() - started };
  }
}
