/** A folder watcher over an in-process pipeline, with the events it emitted, for watch tests. */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFolderWatcher } from '../../src/app/watch.js';
import type { ImportOptions } from '../../src/model/import.js';
import type { FolderWatcher, WatchEvent } from '../../src/watch/folder-watcher.js';
import type { Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';

export const USERS_CREATE: ImportOptions = {
  resource: 'users',
  mode: 'create',
  batchSize: 100,
  listSeparator: '|',
  emptyAsClear: false,
  allowAdmin: false,
};

export interface RunningWatch {
  watcher: FolderWatcher;
  events: WatchEvent[];
  /** Waits for the file `name` to be moved; returns that event. */
  moved(name: string, timeoutMs?: number): Promise<Extract<WatchEvent, { type: 'moved' }>>;
  stop(): Promise<void>;
}

/** Starts a watcher of `dir` importing through the pipeline's context. */
export function startWatch(
  pipeline: Pipeline,
  dir: string,
  extra: { settleMs?: number; options?: Partial<ImportOptions> } = {},
): RunningWatch {
  const events: WatchEvent[] = [];
  const watcher = createFolderWatcher(pipeline.context, {
    dir,
    options: { ...USERS_CREATE, ...extra.options },
    settleMs: extra.settleMs ?? 300,
    pollMs: 50,
    onEvent: (event) => events.push(event),
  });
  const running = watcher.start();
  return {
    watcher,
    events,
    moved: (name, timeoutMs = 60_000) =>
      waitFor(
        () =>
          events.find(
            (event): event is Extract<WatchEvent, { type: 'moved' }> =>
              event.type === 'moved' && event.name === name,
          ),
        { timeoutMs, what: `${name} to be moved` },
      ),
    stop: async () => {
      await watcher.stop();
      await running;
    },
  };
}

export async function tempFolder(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'porter-watch-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The names in a folder, sorted; none when it does not exist. */
export async function namesIn(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).sort();
}
