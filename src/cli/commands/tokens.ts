/** `porter tokens create|list|revoke`: the API's tokens (docs/security.md). */
import type { Command } from 'commander';
import { securityOf } from '../../app/security.js';
import { currentActor } from '../../auth/acting.js';
import { cliPrincipal } from '../../auth/principal.js';
import { parseRole, ROLES } from '../../auth/roles.js';
import { parseExpiry, type TokenInfo } from '../../auth/token-store.js';
import { whoOf } from '../../audit/audit-event.js';
import { newActionId } from '../../audit/audit-log.js';
import { withContext } from '../with-context.js';

function eventBase(): {
  at: string;
  actionId: string;
  who: ReturnType<typeof whoOf>;
  from?: { address?: string };
} {
  const actor = currentActor();
  return {
    at: new Date().toISOString(),
    actionId: newActionId(),
    who: whoOf(actor?.principal ?? cliPrincipal()),
    from: actor?.from ?? { address: 'cli' },
  };
}

function describe(token: TokenInfo): string {
  const targets = token.targets ? `  targets ${token.targets.join(', ')}` : '';
  const expires = token.expiresAt ? `  expires ${token.expiresAt}` : '';
  const scim = token.scimOnly ? '  SCIM only' : '';
  return `${token.id}  ${token.name.padEnd(20)} ${token.role.padEnd(9)}${targets}${scim}${expires}  created ${token.createdAt} by ${token.createdBy}`;
}

export function registerTokensCommand(program: Command): void {
  const tokens = program
    .command('tokens')
    .description('API tokens: each has a name, a role, optional target limits and expiry');
  tokens
    .command('create')
    .description('Create a token and print it once (only its sha256 is kept)')
    .requiredOption('--name <name>', 'who or what uses it, e.g. hr-feed')
    .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`)
    .option('--targets <names>', 'comma-separated targets it may act on (default every target)')
    .option('--expires <when>', 'a duration such as 30d, 12h or 90m, or a date')
    .option(
      '--scim-only',
      'it opens the SCIM routes of its targets and nothing else (docs/scim.md)',
    )
    .action(
      async (options: {
        name: string;
        role: string;
        targets?: string;
        expires?: string;
        scimOnly?: boolean;
      }) => {
        const role = parseRole(options.role);
        const targets = options.targets
          ?.split(',')
          .map((name) => name.trim())
          .filter(Boolean);
        const expiresAt = options.expires ? parseExpiry(options.expires) : undefined;
        await withContext(async (context) => {
          if (targets) for (const name of targets) context.targets.require(name);
          const created = await securityOf(context).tokens.create(
            { name: options.name, role, targets, scimOnly: options.scimOnly === true, expiresAt },
            eventBase(),
          );
          console.log(created.token);
          console.error(
            `token ${created.info.id} (${created.info.name}, ${role}) created; it is not shown again`,
          );
        });
      },
    );
  tokens
    .command('list')
    .description('List the tokens (never the tokens themselves)')
    .option('--json', 'print them as JSON')
    .action(async (options: { json?: boolean }) => {
      await withContext(async (context) => {
        const all = await securityOf(context).tokens.list();
        if (options.json) console.log(JSON.stringify(all, null, 2));
        else if (all.length === 0)
          console.log('no tokens (PORTER_API_TOKEN still opens the API as admin)');
        else for (const token of all) console.log(describe(token));
      });
    });
  tokens
    .command('revoke')
    .description('Revoke a token by id or name: it is refused from now on')
    .argument('<token>', 'the token id or name')
    .action(async (idOrName: string) => {
      await withContext(async (context) => {
        const revoked = await securityOf(context).tokens.revoke(idOrName, eventBase());
        console.log(`token ${revoked.id} (${revoked.name}) revoked`);
      });
    });
}
