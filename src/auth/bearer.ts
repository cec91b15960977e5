/**
 * What a presented token is: PORTER_API_TOKEN (one admin), a stored token of `porter tokens
 * create`, or nothing. The API checks its bearer tokens and the command line its `--token`
 * (PORTER_TOKEN) here, the same way.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { API_TOKEN_PRINCIPAL, type Principal } from './principal.js';
import type { TokenStore } from './token-store.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Whether `given` is the API token, compared in constant time. */
export function isApiToken(given: string, token: string | undefined): boolean {
  return token !== undefined && timingSafeEqual(digest(given), digest(token));
}

/** The principal of a presented token, or undefined when it is unknown, wrong, revoked or expired. */
export async function principalOfToken(
  tokens: TokenStore,
  given: string,
  apiToken: string | undefined,
): Promise<Principal | undefined> {
  if (isApiToken(given, apiToken)) return API_TOKEN_PRINCIPAL;
  return tokens.verify(given);
}
