/** `porter targets` and `porter targets check [NAME]`. */
import type { Command } from 'commander';
import { checkTargets, listTargets, type TargetCheck } from '../../app/targets.js';
import type { TargetSummary } from '../../targets/targets.js';
import { targetOption } from '../options.js';
import { withContext } from '../with-context.js';

/** One line per target: name, URL, sign-in, limits. */
export function describeTarget(target: TargetSummary): string {
  const auth =
    target.auth === 'none'
      ? 'no sign-in'
      : `${target.auth}${target.user ? ` as ${target.user}` : ''}${target.secrets.length > 0 ? ` (${target.secrets.join(', ')})` : ''}`;
  const limits = [
    target.maxRps > 0 ? `max ${target.maxRps} rps` : '',
    target.maxInFlight ? `${target.maxInFlight} in flight` : '',
    target.readOnly ? 'read-only' : '',
  ].filter(Boolean);
  const problem = target.problem ? `  UNUSABLE: ${target.problem}` : '';
  return `${target.name.padEnd(12)} ${target.url}  ${auth}${limits.length > 0 ? `  ${limits.join(', ')}` : ''}  [${target.from}]${problem}`;
}

/** One line per check: ok or failed, why, answer time, counts. */
export function describeCheck(check: TargetCheck): string {
  const time = check.answerMs === undefined ? '' : `  ${check.answerMs} ms`;
  if (!check.ok)
    return `${check.name.padEnd(12)} FAILED  ${check.url}  ${check.reason ?? ''}${time}`;
  const counts = check.counts
    ? `  users ${check.counts.users ?? 0}, groups ${check.counts.groups ?? 0}, acls ${check.counts.acls ?? 0}`
    : '';
  return `${check.name.padEnd(12)} ok      ${check.url}${time}${counts}${check.readOnly ? '  read-only' : ''}`;
}

export function registerTargetsCommand(program: Command): void {
  const targets = program
    .command('targets')
    .description(
      'List the targets (named admin servers: PORTER_TARGETS_FILE and ADMIN_*); no secret is shown',
    )
    .option('--json', 'print them as JSON')
    .action(async (options: { json?: boolean }) => {
      await withContext(async (context) => {
        const list = listTargets(context);
        if (options.json) console.log(JSON.stringify(list, null, 2));
        else for (const target of list) console.log(describeTarget(target));
      });
    });
  targets
    .command('check')
    .description(
      'Check targets live: reachable, signed in, counts of users, groups and ACLs, answer time; exit 1 when one fails',
    )
    .argument('[name]', 'one target (default: every one)', targetOption('NAME'))
    .option('--no-counts', 'skip reading every record to count them')
    .option('--json', 'print the checks as JSON')
    .action(
      async (
        name: string | undefined,
        options: { counts: boolean; json?: boolean },
        command: Command,
      ) => {
        // `porter targets --json` is an option of the parent too: either one asks for JSON
        const json = command.optsWithGlobals<{ json?: boolean }>().json === true;
        await withContext(async (context) => {
          const names = name === undefined ? undefined : [context.targets.require(name).name];
          const checks = await checkTargets(context, names, { counts: options.counts });
          if (json) console.log(JSON.stringify(checks, null, 2));
          else for (const check of checks) console.log(describeCheck(check));
          process.exitCode = checks.every((check) => check.ok) ? 0 : 1;
        });
      },
    );
}
