import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { noteEnded } from '../../auth/acting.js';
import {
  describeStages,
  requireMigration,
  saveMigrationBundle,
  startLiveMigration,
  startMigration,
  writeMigrationReport,
} from '../../app/migrations.js';
import type { PorterContext } from '../../app/context.js';
import { workersRunning } from '../../app/imports.js';
import { PorterError } from '../../errors/porter-error.js';
import {
  FINAL_MIGRATION_STATES,
  MIGRATION_MODES,
  STAGES,
  type MigrationInfo,
  type MigrationMode,
} from '../../migrate/migration-model.js';
import { DEFAULT_TARGET } from '../../targets/targets.js';
import { follow } from '../follow.js';
import { oneOf, positiveInteger, targetOption } from '../options.js';
import { checkInputFile, checkOutputFile, checkOutputFilesIn } from '../paths.js';
import { addWaitOptions, willWait } from '../queued-work.js';
import { withContext } from '../with-context.js';

interface MigrateCommandOptions {
  from?: string;
  to?: string;
  saveBundle?: string;
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
  const reading = info.state === 'receiving' && info.from ? `, reading ${info.from}` : '';
  // the targets, once a migration names more than the default one
  const route = info.from
    ? ` [${info.from} → ${info.to}]`
    : info.to !== DEFAULT_TARGET
      ? ` [→ ${info.to}]`
      : '';
  return `migration ${info.id} ${info.state}${reason}${reading}${where}${plan}${route}`;
}

export function registerMigrateCommand(program: Command): void {
  const command = program
    .command('migrate')
    .description(
      'Load everything of one instance into another: groups, ACLs, users, then memberships, ids remapped. ' +
        'The source is a bundle (porter export --format bundle) or a live target (--from OLD, read by a worker); ' +
        'the target is --to NEW (default: default)',
    )
    .argument('[bundle]', 'bundle file (or --from TARGET)')
    .option(
      '--from <target>',
      'read the source live from this target (no bundle file)',
      targetOption('--from'),
    )
    .option('--to <target>', 'the target written to (default: default)', targetOption('--to'))
    .option(
      '--save-bundle <file>',
      'with --from: also write what was read from the source as a bundle file, here (on this machine)',
    )
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
    .action(async (file: string | undefined, options: MigrateCommandOptions) => {
      const wait = willWait(options);
      if (options.force && !options.report) {
        throw new PorterError(
          'PORTER_USAGE',
          '--force overwrites an output file: it goes with --report DIR',
        );
      }
      if ((file === undefined) === (options.from === undefined)) {
        throw new PorterError(
          'PORTER_USAGE',
          'name the source once: a bundle file, or --from TARGET to read a target live',
        );
      }
      if (options.saveBundle !== undefined && options.from === undefined) {
        throw new PorterError(
          'PORTER_USAGE',
          '--save-bundle needs --from (a bundle is a file already)',
        );
      }
      if (file !== undefined) await checkInputFile(file, 'bundle');
      if (options.report) {
        const names = [...STAGES.map((stage) => `${stage}.csv`), 'id-map.csv'];
        await checkOutputFilesIn(options.report, names, '--report', options.force === true);
      }
      if (options.saveBundle) await checkOutputFile(options.saveBundle, '--save-bundle');
      const migrationOptions = {
        target: options.to,
        mode: options.mode,
        dryRun: options.dryRun === true,
        allowAdmin: options.allowAdmin === true,
        batchSize: options.batchSize,
      };
      await withContext(async (context) => {
        const info =
          file !== undefined
            ? await startMigration(
                context,
                {
                  source: createReadStream(file),
                  fileName: basename(file),
                  options: migrationOptions,
                },
                (id) => console.log(id),
              )
            : await startLiveMigration(context, {
                from: options.from!,
                options: migrationOptions,
              });
        if (file === undefined) console.log(info.id);
        if (options.saveBundle !== undefined) {
          const read = await followMigration(
            context,
            info.id,
            (current) => current.state !== 'receiving',
          );
          if (read.state === 'failed') {
            console.error(summarizeMigration(read));
            process.exitCode = migrationExitCode(read);
            return;
          }
          const saved = await saveMigrationBundle(context, info.id, options.saveBundle);
          console.error(
            `bundle of ${info.from} written to ${options.saveBundle} (${saved.bytes} bytes, sha256 ${saved.sha256})`,
          );
        }
        if (!wait) {
          const { groups, users, acls } = info.totals;
          console.error(
            file !== undefined
              ? `queued: ${groups} groups, ${acls} ACLs, ${users} users; follow with: porter status ${info.id} --follow`
              : `queued: a worker reads ${info.from}, then migrates it into ${info.to}; follow with: porter status ${info.id} --follow`,
          );
          return;
        }
        const final = await followMigration(context, info.id, (current) =>
          FINAL_MIGRATION_STATES.has(current.state),
        );
        // follow() has said the final state; the stages follow it
        for (const line of describeStages(final)) console.error(`  ${line}`);
        if (options.report) {
          await writeMigrationReport(context, info.id, options.report);
          console.error(`report written to ${options.report}`);
        }
        noteEnded({ id: final.id, state: final.state });
        process.exitCode = migrationExitCode(final);
      });
    });
}

/** Follows the migration until `until` holds, or it ends; says its state as it goes. */
export function followMigration(
  context: PorterContext,
  migrationId: string,
  until: (info: MigrationInfo) => boolean = () => false,
): Promise<MigrationInfo> {
  return follow({
    what: 'migration',
    read: () => requireMigration(context, migrationId),
    redis: context.redisWatch,
    isFinal: (current) => until(current) || FINAL_MIGRATION_STATES.has(current.state),
    mark: (current) => `${current.state}:${current.stages.map((s) => s.done).join(',')}`,
    describe: summarizeMigration,
    stuckHint: async () =>
      (await workersRunning(context))
        ? undefined
        : 'no worker is running: start one with `npx porter worker`',
  });
}
