import type { ImportInfo } from '../../model/import.js';
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import {
  cancelImport,
  describeImport,
  requireImport,
  resumeImport,
  retryImport,
  leftOutText,
  applyImport,
  writeReport,
  type ReportFormat,
} from '../../app/imports.js';
import { PorterError } from '../../errors/porter-error.js';
import { registerPlanCommand } from '../plan-command.js';
import { RESULT_STATUSES, type ResultStatus } from '../../model/import.js';
import { listOf, oneOf } from '../options.js';
import { checkOutputDirectory, checkOutputFile, openOutputFile } from '../paths.js';
import { describeActions, describeLookup, followImport, summarize } from '../progress.js';
import { importExitCode } from '../exit-code.js';
import {
  addReportOptions,
  addWaitOptions,
  checkReportArguments,
  finishQueuedImport,
  willWait,
  type ReportValues,
} from '../queued-work.js';
import { describeLinks } from '../../model/import-story.js';
import { whyLines } from '../../results/import-why.js';
import type { PorterContext } from '../../app/context.js';
import { withContext } from '../with-context.js';
import { requireExport } from '../../app/exports.js';
import { describeStages, requireMigration, writeMigrationReport } from '../../app/migrations.js';
import { isValidExportId } from '../../export/export-id.js';
import { followExport, summarizeExport } from '../export-progress.js';
import { isMigrationId } from '../../migrate/migration-store.js';
import { followMigration, migrationExitCode, summarizeMigration } from './migrate.js';
import { describeSync } from '../sync.js';
import { describeTarget } from '../progress.js';

export function registerStatusCommands(program: Command): void {
  program
    .command('status')
    .description('Show the state, counts and progress of an import, a migration or an export')
    .argument('<id>', 'import, migration or export id')
    .option('--json', 'print the full state as JSON')
    .option(
      '--follow',
      'follow it until it ends, then summarize and exit with its code, as --wait does',
    )
    .action(async (id: string, options: { json?: boolean; follow?: boolean }) => {
      await withContext(async (context) => {
        if (isValidExportId(id)) {
          const exported = options.follow
            ? await followExport({
                read: () => requireExport(context, id),
                redis: context.redisWatch,
              })
            : await requireExport(context, id);
          console.log(options.json ? JSON.stringify(exported, null, 2) : summarizeExport(exported));
          if (options.follow) process.exitCode = exported.state === 'completed' ? 0 : 1;
          return;
        }
        if (isMigrationId(id)) {
          const migration = options.follow
            ? await followMigration(context, id)
            : await requireMigration(context, id);
          if (options.json) console.log(JSON.stringify(migration, null, 2));
          else {
            console.log(summarizeMigration(migration));
            for (const line of describeStages(migration)) console.log(`  ${line}`);
          }
          if (options.follow) process.exitCode = migrationExitCode(migration);
          return;
        }
        if (options.follow) {
          await requireImport(context, id);
          await followImport({ read: () => context.store.get(id), redis: context.redisWatch });
        }
        const info = await describeImport(context, id);
        if (options.follow) process.exitCode = importExitCode(info);
        if (options.json) {
          console.log(JSON.stringify(info, null, 2));
          return;
        }
        for (const line of await statusLines(context, info)) console.log(line);
      });
    });

  program
    .command('report')
    .description(
      'Write the per-record report of an import, in input order (of a migration: its report directory, with --out DIR)',
    )
    .argument('<id>', 'import or migration id')
    .option(
      '--status <list>',
      'only these statuses, e.g. failed,unprocessed',
      listOf('--status', RESULT_STATUSES),
    )
    .option('--format <format>', 'csv or json', oneOf('--format', ['csv', 'json'] as const), 'csv')
    .option('--out <file>', 'write to this file instead of standard output')
    .option('--force', 'overwrite the --out file when it exists')
    .action(
      async (
        id: string,
        options: { status?: ResultStatus[]; format: ReportFormat; out?: string; force?: boolean },
      ) => {
        if (options.force && !options.out) {
          throw new PorterError('PORTER_USAGE', '--force goes with --out FILE');
        }
        if (isMigrationId(id)) {
          await writeMigrationReportTo(id, options.out);
          return;
        }
        const force = options.force === true;
        if (options.out) await checkOutputFile(options.out, '--out', { force });
        await withContext(async (context) => {
          // the file is made only for an import that exists
          await requireImport(context, id);
          const out = options.out
            ? await openOutputFile(options.out, '--out', force)
            : process.stdout;
          const count = await writeReport(context, id, out, {
            format: options.format,
            status: options.status,
          });
          if (options.out) {
            await finished(out);
            console.error(`${count} results written to ${options.out}`);
          }
        });
      },
    );

  program
    .command('cancel')
    .description(
      'Cancel an import: batches not yet sent are never sent; their records are reported unprocessed',
    )
    .argument('<id>', 'import id')
    .action(async (id: string) => {
      await withContext(async (context) => {
        const info = await cancelImport(context, id);
        console.log(summarize(info));
      });
    });

  program
    .command('resume')
    .description('Resume a paused import now, without waiting for its next probe of the server')
    .argument('<id>', 'import id')
    .action(async (id: string) => {
      await withContext(async (context) => {
        console.log(summarize(await resumeImport(context, id)));
      });
    });

  registerPlanCommand(program, {
    name: 'apply',
    description:
      'Apply a finished dry run: write its planned records, each only if the server still holds what it was planned against. Prints the counts and the first deletes and locks, then asks (--yes: does not ask)',
    idText: 'the dry run',
    yesText: 'apply without asking',
    writer: 'new import',
    write: (context, id, onCreated) => applyImport(context, id, onCreated),
    queuedText: (id) => `queued: the plan of ${id}`,
  });

  const retry = program
    .command('retry')
    .description(
      'Start a new import of the records of an ended import that did not succeed and that a retry can mend (never a validation failure, duplicate, look-alike, admin guard or stale plan)',
    )
    .argument('<id>', 'import id (of an approved held sync: the import that wrote its plan)')
    .option('--status <list>', 'statuses to retry', listOf('--status', RESULT_STATUSES), [
      'failed',
      'unprocessed',
    ]);
  addReportOptions(
    addWaitOptions(retry, 'new import'),
    'write the per-record report of the new import to this file',
  ).action(async (id: string, options: ReportValues & { status: ResultStatus[] }) => {
    willWait(options);
    await checkReportArguments(options);
    await withContext(async (context) => {
      const { import: info, leftOut } = await retryImport(context, id, options.status, (created) =>
        console.log(created.id),
      );
      if (info.retryOf !== id) {
        console.error(`${id} was approved and written by import ${info.retryOf}: retrying that`);
      }
      if (leftOut.total > 0) console.error(leftOutText(info.retryOf ?? id, leftOut));
      await finishQueuedImport(context, info, options, {
        queuedText: `queued: ${info.total} records of ${info.retryOf ?? id}`,
      });
    });
  });
}

/** Who started the import (and for whom), and who approved or applied its plan, when known. */
export function describeWho(info: ImportInfo): string {
  const parts: string[] = [];
  if (info.startedBy !== undefined) {
    const behalf = info.onBehalfOf !== undefined ? ` for ${info.onBehalfOf}` : '';
    parts.push(`started by ${info.startedBy}${behalf}`);
  }
  if (info.approval !== undefined) {
    const what = info.state === 'held' || info.sync?.held === true ? 'approved' : 'applied';
    parts.push(`${what} by ${info.approval.by} at ${info.approval.at}`);
  }
  return parts.join(', ');
}

/** What `porter status` says of an import: its closing lines, with progress, lookup and calls. */
async function statusLines(
  context: PorterContext,
  info: Awaited<ReturnType<typeof describeImport>>,
): Promise<string[]> {
  const eta =
    info.progress.etaSeconds === undefined
      ? ''
      : `, about ${Math.ceil(info.progress.etaSeconds)}s left`;
  const lines = [
    summarize(info),
    describeTarget(info.options),
    describeWho(info),
    `${info.progress.percent}% done, ${info.progress.ratePerSecond} records/s${eta}`,
    describeActions(info),
    info.lookup ? describeLookup(info.lookup) : '',
    info.sync ? describeSync(info) : '',
    `calls: ${info.calls.writeCalls} writes, ${info.calls.lookupReads} lookups, ${info.calls.reconcileReads} reconcile reads`,
    ...describeLinks(info),
  ];
  // an approved held sync: what the import that wrote its plan did
  if (info.writtenBy !== undefined) {
    const writer = await context.store.get(info.writtenBy);
    if (writer) {
      lines.push(`written by ${summarize(writer)}`);
      const done = describeActions(writer);
      if (done) lines.push(`  ${done}`);
    }
  }
  lines.push(...whyLines(info));
  return lines.filter((line) => line !== '');
}

/** A migration's report is a directory: one file per stage and its id map. */
async function writeMigrationReportTo(migrationId: string, out: string | undefined): Promise<void> {
  if (out === undefined) {
    throw new PorterError(
      'PORTER_USAGE',
      `${migrationId} is a migration: its report is a directory (a file per stage and id-map.csv); ` +
        `write it with porter report ${migrationId} --out DIR, or see its stages with porter status ${migrationId}`,
    );
  }
  await checkOutputDirectory(out, '--out');
  await withContext(async (context) => {
    await requireMigration(context, migrationId);
    await writeMigrationReport(context, migrationId, out);
    console.error(`report of ${migrationId} written to ${out}`);
  });
}
