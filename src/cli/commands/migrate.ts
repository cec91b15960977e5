import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import {
  describeStages,
  requireMigration,
  startMigration,
  writeMigrationReport,
} from '../../app/migrations.js';
import { workersRunning } from '../../app/imports.js';
import { PorterError } from '../../errors/porter-error.js';
import {
  FINAL_MIGRATION_STATES,
  MIGRATION_MODES,
  STAGES,
  type MigrationInfo,
  type MigrationMode,
} from '../../migrate/migration-model.js';
import { follow } from '../follow.js';
import { oneOf, positiveInteger } from '../options.js';
import { checkInputFile, checkOutputFilesIn } from '../paths.js';
import { addWaitOptions, willWait } from '../queued-work.js';
import { withContext } from '../with-context.js';
import type { PorterContext } from '../../app/context.js';

interface MigrateCommandOptions {
  mode: MigrationMode;
  batchSize: number;
  allowAdmin?: boolean;
  dryRun?: boolean;
  wait?: boolean;
  report?: string;
  force?: boolean;
}

/** Exit code of a finished migration: 0 every record migrated, 2 some did not, 1 it failed. */
export function migrationExitCode(info: MigrationInfo): number {
  if (info.state === 'completed') return 0;
  if (info.state === 'completed_with_errors') return 2;
  return 1;
}

/** One line: the state, the stage running, and its progress. */
export function summarizeMigration(info: MigrationInfo): string {
  const stage = info.stages.find((one) => one.stage === info.stage);
  const where = stage ? `, stage ${stage.stage} ${stage.done}/${stage.total}` : '';
  const reason = info.reason ? ` (${info.reason})` : '';
  const plan = info.options.dryRun ? ' [dry run]' : '';
  return `migration ${info.id} ${info.state}${reason}${where}${plan}`;
}

/** Follows a migration until it ends; says its final state (the caller adds the stages). */
export async function followMigration(
  context: PorterContext,
  migrationId: string,
): Promise<MigrationInfo> {
  return follow({
    what: 'migration',
    read: () => requireMigration(context, migrationId),
    isFinal: (current) => FINAL_MIGRATION_STATES.has(current.state),
    mark: (current) => `${current.state}:${current.stages.map((s) => s.done).join(',')}`,
    describe: summarizeMigration,
    stuckHint: async () =>
      (await workersRunning(context))
        ? undefined
        : 'no worker is running: start one with `npx porter worker`',
  });
}

export function registerMigrateCommand(program: Command): void {
  const command = program
    .command('migrate')
    .description(
      'Load a bundle (porter export --format bundle) into the target: groups, ACLs, users, then memberships, ids remapped',
    )
    .argument('<bundle>', 'bundle file')
    .option(
      '--mode <mode>',
      'create (a record already on the target fails) or upsert',
      oneOf('--mode', MIGRATION_MODES),
      'upsert',
    )
    .option('--batch-size <n>', 'records per call', positiveInteger('--batch-size'), 100)
    .option('--allow-admin', 'migrate users whose type is not "General User"')
    .option('--dry-run', 'plan only: every stage shows what it would write; nothing is written');
  addWaitOptions(command, 'migration')
    .option(
      '--report <dir>',
      'write the per-stage reports and id-map.csv into this directory when the migration ends (waits for the end)',
    )
    .option('--force', 'overwrite the report files already in the --report directory')
    .action(async (file: string, options: MigrateCommandOptions) => {
      const wait = willWait(options);
      if (options.force && !options.report) {
        throw new PorterError(
          'PORTER_USAGE',
          '--force overwrites an output file: it goes with --report DIR',
        );
      }
      await checkInputFile(file, 'bundle');
      if (options.report) {
        const names = [...STAGES.map((stage) => `${stage}.csv`), 'id-map.csv'];
        await checkOutputFilesIn(options.report, names, '--report', options.force === true);
      }
      await withContext(async (context) => {
        const info = await startMigration(
          context,
          {
            source: createReadStream(file),
            fileName: basename(file),
            options: {
              mode: options.mode,
              dryRun: options.dryRun === true,
              allowAdmin: options.allowAdmin === true,
              batchSize: options.batchSize,
            },
          },
          (id) => console.log(id),
        );
        if (!wait) {
          const { groups, users, acls } = info.totals;
          console.error(
            `queued: ${groups} groups, ${acls} ACLs, ${users} users; follow with: porter status ${info.id} --follow`,
          );
          return;
        }
        const final = await followMigration(context, info.id);
        // follow() has said the final state; the stages follow it
        for (const line of describeStages(final)) console.error(`  ${line}`);
        if (options.report) {
          await writeMigrationReport(context, info.id, options.report);
          console.error(`report written to ${options.report}`);
        }
        process.exitCode = migrationExitCode(final);
      });
    });
}
