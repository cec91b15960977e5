/**
 * The command line acting as a person. The CLI holds Redis, so its own principal (`cli:<user>`,
 * which PORTER_CLI_USER names at will) cannot stand for one. Where that matters (four eyes when
 * approving or applying a plan, a token's target limits when `porter map test` reads a target),
 * a command takes an API token (`--token`, else PORTER_TOKEN), checked as the API checks a bearer
 * token (PORTER_API_TOKEN, or a stored token neither revoked nor expired), and acts as that
 * token's principal. A wrong token is PORTER_UNAUTHORIZED and a `token.refused` audit event; a
 * token whose role falls short is PORTER_FORBIDDEN.
 */
import type { Actor } from '../auth/acting.js';
import { principalOfToken } from '../auth/bearer.js';
import { cliPrincipal } from '../auth/principal.js';
import { roleIncludes, type Role } from '../auth/roles.js';
import { TokenStore } from '../auth/token-store.js';
import { whoOf } from '../audit/audit-event.js';
import { AuditLog, newActionId } from '../audit/audit-log.js';
import { loadEnv } from '../config/env.js';
import { PorterError } from '../errors/porter-error.js';
import { createRedisConnection } from '../redis/connect.js';

/** The commands that act as a token when given one, and the role the token needs. */
const TOKEN_ROLES: Readonly<Record<string, Role>> = {
  approve: 'approver',
  apply: 'approver',
  'map test': 'viewer',
};

/**
 * Makes `actor` the principal of the token given to the command at `path` (`--token`, else
 * PORTER_TOKEN); nothing when the command takes no token or none is given.
 */
export async function actAsToken(
  actor: Actor,
  path: string,
  flag: string | undefined,
): Promise<void> {
  const needed = TOKEN_ROLES[path];
  if (needed === undefined) return;
  const env = loadEnv();
  const given = (flag ?? env.PORTER_TOKEN)?.trim();
  if (!given) return;
  const redis = createRedisConnection(env, 'probe', { timeoutMs: 5_000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    const audit = new AuditLog({
      redis,
      prefix: env.PORTER_PREFIX,
      retentionDays: env.PORTER_AUDIT_RETENTION_DAYS,
      file: env.PORTER_AUDIT_FILE,
    });
    const principal = await principalOfToken(
      new TokenStore(redis, env.PORTER_PREFIX, audit),
      given,
      env.PORTER_API_TOKEN,
    );
    // the shell user who presented it, for the trail
    const from = { address: 'cli', userAgent: `porter ${path} (${cliPrincipal().name})` };
    if (!principal) {
      await audit.append({
        at: new Date().toISOString(),
        action: 'token.refused',
        phase: 'done',
        actionId: newActionId(),
        who: whoOf(undefined),
        from,
        what: { command: path },
        result: { ok: false, code: 'PORTER_UNAUTHORIZED' },
      });
      throw new PorterError(
        'PORTER_UNAUTHORIZED',
        `the token of --token (or PORTER_TOKEN) is not a porter token, or was revoked or expired; an admin makes one with porter tokens create --name NAME --role ${needed}`,
      );
    }
    if (!roleIncludes(principal.role, needed)) {
      throw new PorterError(
        'PORTER_FORBIDDEN',
        `porter ${path} needs the ${needed} role; ${principal.name} has ${principal.role}`,
        { details: { needed, role: principal.role } },
      );
    }
    actor.principal = principal;
    actor.from = from;
  } finally {
    redis.disconnect();
  }
}
