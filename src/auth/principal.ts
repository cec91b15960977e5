/** Who is acting: a token, a console session, or the CLI's shell user. */
import { userInfo } from 'node:os';
import type { Role } from './roles.js';

export interface Principal {
  /**
   * Shown in the audit trail and recorded on what it starts: `token:<name>`, `oidc:<sub>@<issuer>`,
   * `cli:<user>`, or `schedule:<name>`, `watch:<dir>` for a worker's own runs.
   */
  name: string;
  role: Role;
  /** How it signed in; `schedule` and `watch` are a worker acting on its own. */
  via: 'api-token' | 'token' | 'session' | 'oidc' | 'cli' | 'schedule' | 'watch';
  /** For a schedule or watch: who added it, when known. */
  onBehalfOf?: string;
  /** The only targets it may act on; undefined for all. */
  targets?: readonly string[];
  /** A token that opens the SCIM routes of its targets only (`--scim-only`). */
  scimOnly?: boolean;
  /** The stored token's id, when a token. */
  tokenId?: string;
  /** A name to show beside `name` (an OpenID Connect user's email); never compared. */
  display?: string;
}

/** `PORTER_API_TOKEN`: one admin token, as before roles existed. */
export const API_TOKEN_PRINCIPAL: Principal = {
  name: 'token:PORTER_API_TOKEN',
  role: 'admin',
  via: 'api-token',
};

/**
 * The CLI's principal. The CLI holds Redis itself, so API roles cannot bind it: it acts as
 * admin, named after the shell user (`PORTER_CLI_USER` overrides, for a shared service account).
 */
export function cliPrincipal(env: NodeJS.ProcessEnv = process.env): Principal {
  let user = env.PORTER_CLI_USER;
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = env.USER ?? 'unknown';
    }
  }
  return { name: `cli:${user}`, role: 'admin', via: 'cli' };
}
