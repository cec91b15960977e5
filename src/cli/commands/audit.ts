/** `porter audit`: the audit trail, newest first (docs/security.md#audit-trail). */
import type { Command } from 'commander';
import { securityOf } from '../../app/security.js';
import type { AuditEvent } from '../../audit/audit-event.js';
import { describeResult } from '../../audit/outcome.js';
import { parseSince } from '../../audit/since.js';
import { positiveInteger } from '../options.js';
import { withContext } from '../with-context.js';

/** One line per event: when, who, action, what, result. */
export function describeEvent(event: AuditEvent): string {
  const what = Object.entries(event.what)
    .map(
      ([key, value]) =>
        `${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
    )
    .join(' ');
  const result = describeResult(event);
  const from = event.from?.address ? ` from ${event.from.address}` : '';
  return `${event.at}  ${event.who.name}${from}  ${event.action}  ${result}  ${what}`;
}

export function registerAuditCommand(program: Command): void {
  program
    .command('audit')
    .description('Show the audit trail: who did what, when, from where, and the result')
    .option('--since <when>', 'only events since: 24h, 7d, 30m or an ISO time')
    .option('--who <name>', 'only events of principals whose name contains this')
    .option('--action <action>', 'only events of this action (a prefix: import. takes them all)')
    .option('--limit <n>', 'at most this many, newest first', positiveInteger('--limit'), 200)
    .option('--json', 'print the events as a JSON array, as GET /v1/audit answers them')
    .action(
      async (options: {
        since?: string;
        who?: string;
        action?: string;
        limit: number;
        json?: boolean;
      }) => {
        const since = parseSince(options.since);
        await withContext(async (context) => {
          const events = await securityOf(context).audit.read({
            since,
            who: options.who,
            action: options.action,
            limit: options.limit,
          });
          if (options.json) console.log(JSON.stringify(events, null, 2));
          else for (const event of events) console.log(describeEvent(event));
        });
      },
    );
}
