import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { RESOURCE_NAMES, type ResourceName } from '../../admin/resources.js';
import { createFolderWatcher, DEFAULT_SEEN_DAYS } from '../../app/watch.js';
import { boundToTarget } from '../../app/imports.js';
import { PorterError } from '../../errors/porter-error.js';
import type { WatchEvent } from '../../watch/folder-watcher.js';
import { addImportOptions, importOptionsFrom, type ImportOptionValues } from '../import-options.js';
import { oneOf, positiveInteger } from '../options.js';
import { withContext } from '../with-context.js';

interface WatchCommandOptions extends ImportOptionValues {
  resource: ResourceName;
  settleMs: number;
  seenDays: number;
}

/** One line per thing a person watching the terminal wants to know. */
function describeEvent(event: WatchEvent): string | undefined {
  switch (event.type) {
    case 'started':
      return `${event.name}: import ${event.importId} started`;
    case 'moved': {
      const state = event.state ? ` ${event.state}` : '';
      const what = event.importId ? ` (import ${event.importId}${state})` : '';
      const note = event.note ? `: ${event.note}` : '';
      return `${event.name} → ${event.to}/${event.movedAs}${what}${note}`;
    }
    case 'retry':
      return `${event.name}: could not start its import (${event.error}); trying again`;
    default:
      return undefined;
  }
}

async function checkDirectory(dir: string): Promise<void> {
  const stats = await stat(dir).catch(() => undefined);
  if (!stats?.isDirectory()) {
    throw new PorterError('PORTER_NOT_FOUND', `DIR ${dir}: not a directory`, {
      details: { field: 'DIR', value: dir },
    });
  }
}

export function registerWatchCommand(program: Command): void {
  const command = program
    .command('watch')
    .description(
      'Import every file that arrives in DIR once it stops growing, one at a time; done files go to DIR/processed/ (with NAME.report.csv), refused ones to DIR/failed/ (with NAME.note.txt)',
    )
    .argument('<dir>', 'folder to watch')
    .requiredOption(
      '--resource <resource>',
      'users, groups or acls',
      oneOf('--resource', RESOURCE_NAMES),
    );
  addImportOptions(command)
    .option(
      '--settle-ms <ms>',
      'a file is taken once its size and time have not changed for this long',
      positiveInteger('--settle-ms'),
      2_000,
    )
    .option(
      '--seen-days <days>',
      'days the content of an imported file is remembered, so that it is never imported twice',
      positiveInteger('--seen-days'),
      DEFAULT_SEEN_DAYS,
    )
    .action(async (dir: string, options: WatchCommandOptions) => {
      await checkDirectory(dir);
      const importOptions = await importOptionsFrom(options.resource, options);
      await withContext(async (context) => {
        // the target is checked (known here, writable) and fixed before the first file arrives
        const bound = boundToTarget(context, importOptions);
        const watcher = createFolderWatcher(context, {
          dir,
          options: bound,
          settleMs: options.settleMs,
          seenDays: options.seenDays,
          onEvent: (event) => {
            const line = describeEvent(event);
            if (line) console.log(line);
          },
        });
        let signals = 0;
        const onSignal = (signal: NodeJS.Signals): void => {
          signals++;
          if (signals > 1) {
            console.error(`porter watch: second ${signal}, exiting now`);
            process.exit(130);
          }
          console.error(`porter watch: ${signal}, finishing the file in hand`);
          void watcher.stop();
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        console.error(
          `watching ${dir} (${bound.target}: ${importOptions.resource}, ${importOptions.mode})`,
        );
        try {
          await watcher.start();
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
        console.error('porter watch: stopped');
      });
    });
}
