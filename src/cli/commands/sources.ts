/** `porter sources` and `porter sources check [NAME]`: the directories porter reads rows from. */
import type { Command } from 'commander';
import { loadEnv } from '../../config/env.js';
import { checkSource, type SourceCheck } from '../../sources/check-source.js';
import { loadSources, type SourceSummary } from '../../sources/sources.js';

/** One line per source: name, URL, TLS, bind, base and filter; never a secret. */
export function describeSource(source: SourceSummary): string {
  const bind = source.bindDN
    ? `bind ${source.bindDN}${source.secrets.length > 0 ? ` (${source.secrets.join(', ')})` : ''}`
    : 'anonymous';
  const tls = source.startTLS ? '  StartTLS' : '';
  const problem = source.problem ? `  UNUSABLE: ${source.problem}` : '';
  return `${source.name.padEnd(12)} ${source.url}${tls}  ${bind}  ${source.baseDN} ${source.filter}  anchor ${source.anchorAttribute}${source.groups ? '  +groups' : ''}${problem}`;
}

export function describeSourceCheck(check: SourceCheck): string {
  if (!check.ok) {
    return `${check.name.padEnd(12)} FAILED  ${check.url}  ${check.reason ?? ''}  ${check.durationMs} ms`;
  }
  const groups = check.counts?.groups !== undefined ? `, groups ${check.counts.groups}` : '';
  return `${check.name.padEnd(12)} ok      ${check.url}  ${check.durationMs} ms  users ${check.counts?.users ?? 0}${groups}`;
}

export function registerSourcesCommand(program: Command): void {
  const sources = program
    .command('sources')
    .description('List the directory sources (PORTER_SOURCES_FILE); no secret is shown')
    .option('--json', 'print them as JSON')
    .action((options: { json?: boolean }) => {
      const list = loadSources(loadEnv())
        .list()
        .map((source) => source.summary);
      if (options.json) console.log(JSON.stringify(list, null, 2));
      else if (list.length === 0) console.log('no sources (set PORTER_SOURCES_FILE)');
      else for (const source of list) console.log(describeSource(source));
    });
  sources
    .command('check')
    .description(
      'Check sources live: connect, StartTLS, bind, count the entries in scope, time; exit 1 when one fails',
    )
    .argument('[name]', 'one source (default: every one)')
    .option('--json', 'print the checks as JSON')
    .action(async (name: string | undefined, _options: unknown, command: Command) => {
      const json = command.optsWithGlobals<{ json?: boolean }>().json === true;
      const set = loadSources(loadEnv());
      const chosen = name === undefined ? set.list() : [set.named(name)];
      const checks: SourceCheck[] = [];
      for (const source of chosen) checks.push(await checkSource(source));
      if (json) console.log(JSON.stringify(checks, null, 2));
      else for (const check of checks) console.log(describeSourceCheck(check));
      process.exitCode = checks.every((check) => check.ok) ? 0 : 1;
    });
}
