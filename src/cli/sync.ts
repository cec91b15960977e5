/** The sync's command-line options (shared by `porter sync` and `porter import --mode sync`) and its lines. */
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { PorterError } from '../errors/porter-error.js';
import { MISSING_ACTIONS, type ImportInfo, type SyncOptions } from '../model/import.js';
import {
  holdReasons,
  overThreshold,
  parseProtectedText,
  type SyncOptionsInput,
} from '../sync/sync-options.js';
import { oneOf } from './options.js';
import { checkInputFile } from './paths.js';

export interface SyncCommandOptions {
  missing?: string;
  maxDeletes?: string;
  protect?: string;
  scopeGroup?: string;
  scopeMatch?: string;
}

/** Adds the sync's options to a command. */
export function addSyncOptions(command: Command): Command {
  return command
    .option(
      '--missing <action>',
      'records on the server the file leaves out: lock (users; default for users), delete, or ignore (default for groups)',
      oneOf('--missing', MISSING_ACTIONS),
    )
    .option(
      '--max-deletes <n>',
      'most locks and deletes without approval: a number, or a percentage like 5% of the in-scope records on the server (default: the smaller of 500 and 10%)',
    )
    .option('--protect <file>', 'keys never touched, one username or group name per line')
    .option(
      '--scope-group <name>',
      'users: only members of this group count as on the server for --missing',
    )
    .option(
      '--scope-match <regex>',
      'only server records whose key matches count as on the server for --missing',
    );
}

/** Whether any sync option was given (they go with mode sync only). */
export function hasSyncOptions(options: SyncCommandOptions): boolean {
  return [
    options.missing,
    options.maxDeletes,
    options.protect,
    options.scopeGroup,
    options.scopeMatch,
  ].some((value) => value !== undefined);
}

/** The sync's options as given, the --protect file read; checked further when submitted. */
export async function syncOptionsFromCli(options: SyncCommandOptions): Promise<SyncOptions> {
  const input: SyncOptionsInput = {
    missing: options.missing,
    maxDeletes: options.maxDeletes,
    scopeGroup: options.scopeGroup,
    scopeMatch: options.scopeMatch,
  };
  if (options.protect !== undefined) {
    await checkInputFile(options.protect, '--protect');
    const text = await readFile(options.protect, 'utf8').catch((error: unknown) => {
      throw new PorterError('PORTER_NOT_FOUND', `--protect: cannot read ${options.protect}`, {
        cause: error,
      });
    });
    input.protect = parseProtectedText(text);
  }
  // the checks and defaults live in one place (sync-options.ts); the mode's own checks follow
  return input as SyncOptions;
}

/** The sync's plan in a few lines: counts, threshold, and what to do with a held one. */
export function describeSync(info: ImportInfo): string {
  const plan = info.sync;
  if (!plan) return '';
  const lines = [
    `sync: ${plan.locks} lock, ${plan.deletes} delete of ${plan.inScope} in scope on the server ` +
      `(threshold ${plan.threshold}); ${plan.missing} not in the file, ${plan.spared} of them left alone`,
  ];
  if (info.state === 'held') {
    lines.push(
      `held: ${holdReasons(plan).join('; ') || 'the plan passes the threshold'}; nothing was written`,
      `see the records: porter status ${info.id} · porter report ${info.id} --status planned,skipped`,
      `then: another approver than ${info.startedBy ?? 'the one who started it'} approves it (four eyes, unless its target sets requireApproval: false): ` +
        `porter approve ${info.id} as them, or Approve… in the console, writes the plan; porter cancel ${info.id} drops it`,
    );
  } else if (wouldBeHeld(info)) {
    const reasons = overThreshold(plan)
      ? [
          `${plan.locks + plan.deletes} locks and deletes pass the threshold of ${plan.threshold}`,
          ...holdReasons(plan).slice(1),
        ]
      : holdReasons(plan);
    lines.push(
      `a real run would be held: ${reasons.join('; ')}; nothing was written (exit 3)`,
      `to go ahead: porter apply ${info.id} (held in turn; then porter approve), or raise --max-deletes`,
    );
  } else if (plan.approvedFrom) {
    lines.push(`approved plan of ${plan.approvedFrom}`);
  }
  return lines.join('\n');
}

/** A dry run of a sync whose locks and deletes pass the threshold: a real run would be held. */
export function wouldBeHeld(info: ImportInfo): boolean {
  return (
    info.options.dryRun === true && info.sync !== undefined && holdReasons(info.sync).length > 0
  );
}
