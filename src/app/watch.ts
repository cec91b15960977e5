/**
 * `porter watch` over a porter context: each settled file of the folder goes through the same
 * `startImport` as `porter import`, and the watcher waits for the import's end before it moves
 * the file and writes its report beside it.
 */
import { createWriteStream } from 'node:fs';
import { resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { currentPrincipal } from '../auth/acting.js';
import { isPorterError } from '../errors/porter-error.js';
import type { ImportInfo, ImportOptions } from '../model/import.js';
import {
  FolderWatcher,
  type ImportOutcome,
  type WatchEvent,
  type WatchedFile,
} from '../watch/folder-watcher.js';
import { SeenFiles } from '../watch/seen-files.js';
import type { PorterContext } from './context.js';
import { startImport, workersRunning, writeReport } from './imports.js';
import { runAsWorker, type WorkerActor } from './worker-action.js';

export interface WatchFolderOptions {
  dir: string;
  /** Options every import of the folder runs with. */
  options: ImportOptions;
  /** @defaultValue 2000 */
  settleMs?: number;
  /** Milliseconds between scans. @defaultValue settleMs / 2, from 100 to 1000 */
  scanIntervalMs?: number;
  /** Days an imported content is remembered. @defaultValue 90 */
  seenDays?: number;
  /** Milliseconds between reads of a running import. @defaultValue 250 */
  pollMs?: number;
  onEvent?: (event: WatchEvent) => void;
}

/** Days the content of an imported file is remembered when the command does not say. */
export const DEFAULT_SEEN_DAYS = 90;

/**
 * States that end the wait without the import having run to its end. `held` (an import waiting
 * for approval) is compared as text: not every version knows it.
 */
const NOT_DONE_WAITING = new Set(['held']);

/** An import ended by itself, with or without failed records. */
function ranToEnd(info: ImportInfo): boolean {
  return info.state === 'completed' || info.state === 'completed_with_errors';
}

function noteOf(info: ImportInfo): string {
  const state = info.state as string;
  const reason = info.reason ? `: ${info.reason}` : '';
  if (state === 'held') {
    return `not done: import ${info.id} is held for approval${reason}; nothing of it is written until it is approved`;
  }
  return `not done: import ${info.id} ended ${state}${reason}`;
}

/** A watcher of `dir` importing through this context; call `start()`, then `stop()` to end. */
export function createFolderWatcher(
  context: PorterContext,
  watch: WatchFolderOptions,
): FolderWatcher {
  const days = watch.seenDays ?? DEFAULT_SEEN_DAYS;
  const seen = new SeenFiles({
    redis: context.redis,
    prefix: context.env.PORTER_PREFIX,
    ttlSeconds: Math.round(days * 24 * 3600),
  });
  const logger = context.logger.child({ component: 'watch', dir: watch.dir });
  const pollMs = watch.pollMs ?? 250;
  // each file's import is started by the watch, on behalf of whoever started watching
  const startedBy = currentPrincipal()?.name;
  const worker: WorkerActor = {
    name: `watch:${resolve(watch.dir)}`,
    via: 'watch',
    ...(startedBy ? { onBehalfOf: startedBy } : {}),
  };

  /** Reads the import until it has ended (or is held), with one hint when no worker runs. */
  async function waitForEnd(importId: string): Promise<ImportInfo | undefined> {
    const started = Date.now();
    let hinted = false;
    for (;;) {
      const info = await context.store.get(importId);
      if (!info || info.settled || NOT_DONE_WAITING.has(info.state as string)) return info;
      if (!hinted && Date.now() - started > 5_000) {
        hinted = true;
        if (!(await workersRunning(context))) {
          logger.warn({ importId }, 'no worker is running: start one with `porter worker`');
        }
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  async function importFile(
    file: WatchedFile,
    onStarted: (importId: string) => void,
  ): Promise<ImportOutcome> {
    let importId: string | undefined;
    try {
      await runAsWorker(
        context,
        worker,
        'import.start',
        {
          folder: resolve(watch.dir),
          file: file.name,
          resource: watch.options.resource,
          mode: watch.options.mode,
          dryRun: watch.options.dryRun,
          target: watch.options.target,
        },
        () =>
          startImport(
            context,
            { options: watch.options, source: file.open(), fileName: file.name },
            (created) => {
              importId = created.id;
              onStarted(created.id);
            },
          ),
      );
    } catch (error) {
      // refused before an import existed for a passing reason (Redis away): try again later
      if (importId === undefined && !isPorterError(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      if (importId === undefined) return { done: false, note: `not imported: ${message}` };
      const info = await context.store.get(importId);
      return {
        importId,
        state: info?.state,
        done: false,
        note: `not done: import ${importId} ended ${info?.state ?? 'failed'}: ${message}`,
      };
    }
    const info = await waitForEnd(importId!);
    if (!info) {
      return { importId, done: false, note: `not done: import ${importId} disappeared` };
    }
    if (ranToEnd(info)) return { importId, state: info.state, done: true };
    return { importId, state: info.state, done: false, note: noteOf(info) };
  }

  return new FolderWatcher({
    dir: watch.dir,
    settleMs: watch.settleMs,
    scanIntervalMs: watch.scanIntervalMs,
    seen,
    importFile,
    writeReport: async (id, path) => {
      const out = createWriteStream(path, { flags: 'wx' });
      await writeReport(context, id, out, { format: 'csv' });
      await finished(out);
    },
    onEvent: watch.onEvent,
    logger,
  });
}
