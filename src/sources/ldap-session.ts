/**
 * A session with a directory: connected (ldap://, ldaps://, or upgraded with StartTLS), bound
 * as the source's bindDN, and the errors of each step told as PORTER_SOURCE_FAILED with the
 * step and the server's reason. The password is never part of a message.
 */
import { Client, InvalidCredentialsError } from 'ldapts';
import { PorterError } from '../errors/porter-error.js';
import type { LdapSource } from './sources.js';

/** Result codes that mean the read was cut short, in words. */
const LIMITS: Record<number, string> = {
  3: "the directory's time limit was reached (LDAP result 3): the read is incomplete",
  4: "the directory's size limit was reached (LDAP result 4): the read is incomplete; raise the limit for the bindDN (OpenLDAP: limits … size.prtotal=unlimited; AD: MaxPageSize is per page and is fine)",
  10: 'the directory answered with a referral porter cannot follow (LDAP result 10)',
  11: "the directory's administrative limit was reached (LDAP result 11): the read is incomplete",
};

/** Why a directory operation failed, in a few words: the server's message or the socket's. */
export function ldapReason(error: unknown): string {
  if (error instanceof InvalidCredentialsError)
    return 'invalid credentials (wrong bindDN or password)';
  const known = LIMITS[(error as { code?: unknown }).code as number];
  if (known) return known;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const name = error instanceof Error ? error.name.replace(/Error$/, '') : '';
  const text = message.trim() || name || 'no reason given';
  return typeof code === 'number' ? `${text} (LDAP result ${code}${name ? ` ${name}` : ''})` : text;
}

/** PORTER_SOURCE_FAILED for a source, naming what failed. */
export function sourceFailed(source: LdapSource, what: string, cause?: unknown): PorterError {
  const reason = cause === undefined ? '' : `: ${ldapReason(cause)}`;
  return new PorterError(
    'PORTER_SOURCE_FAILED',
    `source "${source.name}" (${source.summary.url}): ${what}${reason}; nothing was written`,
    { cause, details: { source: source.name } },
  );
}

/** An open, bound session; the caller closes it. */
export async function openSession(source: LdapSource): Promise<Client> {
  const tlsOptions = source.ca ? { ca: [source.ca] } : undefined;
  const client = new Client({
    url: source.url,
    timeout: source.timeoutMs ?? 120_000,
    connectTimeout: source.connectTimeoutMs ?? 10_000,
    ...(tlsOptions && source.url.startsWith('ldaps:') ? { tlsOptions } : {}),
    strictDN: false,
  });
  try {
    if (source.startTLS) {
      await client.startTLS(tlsOptions ?? {}).catch((error: unknown) => {
        throw sourceFailed(source, 'StartTLS failed', error);
      });
    }
    if (source.bindDN !== undefined) {
      await client.bind(source.bindDN, source.password ?? '').catch((error: unknown) => {
        throw sourceFailed(source, `bind as ${source.bindDN} failed`, error);
      });
    }
    return client;
  } catch (error) {
    await closeSession(client);
    if (error instanceof PorterError) throw error;
    throw sourceFailed(source, 'cannot connect', error);
  }
}

/** Unbinds and closes, whatever state the session is in. */
export async function closeSession(client: Client): Promise<void> {
  await client.unbind().catch(() => undefined);
}
