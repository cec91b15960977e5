/**
 * Watches a folder for files that arrive by themselves and imports each once it has stopped
 * growing, one at a time in arrival order, then moves it to `processed/` or `failed/`. The
 * import itself is a dependency: this file knows folders, not queues.
 *
 * fs.watch wakes the watcher early; a periodic scan finds what fs.watch missed (network
 * mounts, editors that rename, events lost under load).
 */
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import {
  byArrival,
  FAILED_DIR,
  listEntries,
  moveEntry,
  openEntry,
  PROCESSED_DIR,
  reportPath,
  writeNote,
  type FolderEntry,
} from './folder-files.js';
import type { SeenFiles } from './seen-files.js';

/** A settled file handed to the import: its name, content digest and a reader of it. */
export interface WatchedFile {
  name: string;
  sha256: string;
  size: number;
  /** A new stream of the file's content from its start (the file opened at the check). */
  open(): Readable;
}

/**
 * How an import of a file ended. `done`: it ran to its end (some records may have failed) and
 * the file goes to processed/; otherwise to failed/ with `note`.
 */
export interface ImportOutcome {
  importId?: string;
  state?: string;
  done: boolean;
  note?: string;
}

export type WatchEvent =
  | { type: 'waiting'; name: string; size: number }
  | { type: 'growing'; name: string; size: number }
  | { type: 'importing'; name: string }
  | { type: 'started'; name: string; importId: string }
  | {
      type: 'moved';
      name: string;
      to: typeof PROCESSED_DIR | typeof FAILED_DIR;
      movedAs: string;
      importId?: string;
      state?: string;
      note?: string;
    }
  | { type: 'retry'; name: string; error: string };

export interface FolderWatcherOptions {
  dir: string;
  /** Size and modification time stay the same this long before a file is taken. @defaultValue 2000 */
  settleMs?: number;
  /** Milliseconds between scans of the folder. @defaultValue settleMs / 2, from 100 to 1000 */
  scanIntervalMs?: number;
  /** Attempts on a file whose import could not start for a passing reason. @defaultValue 3 */
  maxAttempts?: number;
  seen: SeenFiles;
  /**
   * Imports one file and waits for the end of its import. Throws when the import could not
   * be created for a passing reason (Redis away): the file stays and is tried again.
   */
  importFile(file: WatchedFile, onStarted: (importId: string) => void): Promise<ImportOutcome>;
  /** Writes the per-record report of an import to a path. */
  writeReport(importId: string, path: string): Promise<void>;
  onEvent?(event: WatchEvent): void;
  logger: Logger;
}

interface Tracked {
  size: number;
  mtimeMs: number;
  stableSince: number;
  attempts: number;
}

const DEFAULT_SETTLE_MS = 2_000;

export class FolderWatcher {
  private readonly settleMs: number;
  private readonly scanIntervalMs: number;
  private readonly tracked = new Map<string, Tracked>();
  private stopping = false;
  private fsWatcher: FSWatcher | undefined;
  private wakeUp: (() => void) | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: FolderWatcherOptions) {
    this.settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
    this.scanIntervalMs =
      options.scanIntervalMs ?? Math.max(100, Math.min(1_000, Math.floor(this.settleMs / 2)));
  }

  /** Starts watching; the files already there are taken like new ones. */
  start(): Promise<void> {
    this.running ??= this.run();
    return this.running;
  }

  /** Takes no new file, finishes the one in hand (its import included), then resolves. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp?.();
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      this.fsWatcher = watch(this.options.dir, { persistent: false }, () => this.wakeUp?.());
      this.fsWatcher.on('error', (error) =>
        this.options.logger.warn({ err: error }, 'fs.watch failed; scanning on a timer only'),
      );
    } catch (error) {
      this.options.logger.warn({ err: error }, 'fs.watch unavailable; scanning on a timer only');
    }
    try {
      while (!this.stopping) {
        const next = await this.scan();
        if (next !== undefined && !this.stopping) {
          await this.take(next).catch((error: unknown) => this.backOff(next.name, error));
          continue;
        }
        await this.sleep();
      }
    } finally {
      this.fsWatcher?.close();
    }
  }

  /**
   * A file that could not be taken or moved (permissions, a full disk) is looked at again
   * later, a little later each time, so that the log is not flooded.
   */
  private backOff(name: string, error: unknown): void {
    const tracked = this.tracked.get(name);
    const attempts = (tracked?.attempts ?? 0) + 1;
    const delayMs = Math.min(300_000, 30_000 * attempts);
    if (tracked) Object.assign(tracked, { attempts, stableSince: Date.now() + delayMs });
    this.options.logger.error(
      { err: error, file: name, attempts, delayMs },
      'could not take a watched file; trying again later',
    );
  }

  /** Waits for a folder event or the next scan time, whichever comes first. */
  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.scanIntervalMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        // a burst of events (one per write) makes one scan
        setTimeout(done, 20);
      };
    });
  }

  /** Reads the folder; returns the first file in arrival order that has settled. */
  private async scan(): Promise<FolderEntry | undefined> {
    const now = Date.now();
    const entries = await listEntries(this.options.dir);
    const present = new Set(entries.map((entry) => entry.name));
    for (const name of this.tracked.keys()) if (!present.has(name)) this.tracked.delete(name);
    const settled: FolderEntry[] = [];
    for (const entry of entries) {
      const known = this.tracked.get(entry.name);
      if (!known) {
        this.tracked.set(entry.name, {
          size: entry.size,
          mtimeMs: entry.mtimeMs,
          stableSince: now,
          attempts: 0,
        });
        this.emit({ type: 'waiting', name: entry.name, size: entry.size });
        continue;
      }
      if (known.size !== entry.size || known.mtimeMs !== entry.mtimeMs) {
        known.size = entry.size;
        known.mtimeMs = entry.mtimeMs;
        known.stableSince = now;
        this.emit({ type: 'growing', name: entry.name, size: entry.size });
        continue;
      }
      if (now - known.stableSince >= this.settleMs) settled.push(entry);
    }
    return settled.sort(byArrival)[0];
  }

  /** Imports one settled file (or refuses it) and moves it out of the folder. */
  private async take(entry: FolderEntry): Promise<void> {
    const { dir, logger } = this.options;
    const { name } = entry;
    const tracked = this.tracked.get(name);
    if (entry.link) {
      await this.finish(name, FAILED_DIR, {
        done: false,
        note:
          'not imported: a symbolic link, which the watcher never follows (it could point ' +
          'outside the folder); copy or move the file itself into the folder',
      });
      return;
    }
    const handle = await openEntry(dir, name);
    if (!handle) return; // gone, or swapped for something that is not a file: scanned again
    let claimed: string | undefined;
    let startedId: string | undefined;
    try {
      const stats = await handle.stat();
      if (stats.size !== entry.size || stats.mtimeMs !== entry.mtimeMs) {
        // it changed since the scan: wait for it to settle again
        if (tracked) Object.assign(tracked, { size: -1, stableSince: Date.now() });
        return;
      }
      const sha256 = await digest(handle);
      const claim = await this.options.seen.claim(sha256, name);
      if (claim.kind === 'seen') {
        const { first } = claim;
        const importText = first.importId ? ` as import ${first.importId}` : '';
        await this.finish(name, FAILED_DIR, {
          done: false,
          note:
            `not imported: the same content (sha256 ${sha256}) came in as ${first.name} on ` +
            `${first.at}${importText}; a content is imported once. Change the file to import it again.`,
        });
        return;
      }
      claimed = sha256;
      this.emit({ type: 'importing', name });
      const file: WatchedFile = {
        name,
        sha256,
        size: stats.size,
        open: () => handle.createReadStream({ start: 0, autoClose: false }),
      };
      const outcome = await this.options.importFile(file, (importId) => {
        startedId = importId;
        this.emit({ type: 'started', name, importId });
        this.options.seen
          .setImport(sha256, name, importId, new Date().toISOString())
          .catch((error: unknown) => logger.warn({ err: error }, 'could not note the import id'));
      });
      claimed = undefined;
      await this.finish(name, outcome.done ? PROCESSED_DIR : FAILED_DIR, outcome);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (claimed !== undefined && startedId !== undefined) {
        // the import exists (its content stays claimed) but its end could not be followed
        logger.warn({ err: error, file: name, importId: startedId }, 'lost a watched import');
        await this.finish(name, FAILED_DIR, {
          importId: startedId,
          done: false,
          note:
            `import ${startedId} started, but its end could not be followed (${message}); ` +
            `see porter status ${startedId}`,
        });
        return;
      }
      if (claimed !== undefined) {
        await this.options.seen.release(claimed).catch(() => {});
      }
      const attempts = (tracked?.attempts ?? 0) + 1;
      if (tracked) Object.assign(tracked, { attempts, stableSince: Date.now() });
      logger.warn({ err: error, file: name, attempts }, 'could not import a watched file');
      this.emit({ type: 'retry', name, error: message });
      if (attempts >= (this.options.maxAttempts ?? 3)) {
        await this.finish(name, FAILED_DIR, {
          done: false,
          note: `not imported: ${attempts} attempts could not start its import (${message})`,
        }).catch((moveError: unknown) =>
          logger.error({ err: moveError, file: name }, 'could not move a watched file'),
        );
      }
    } finally {
      await handle.close().catch(() => {});
    }
  }

  /** Moves the file, then writes its report and note beside it. */
  private async finish(
    name: string,
    to: typeof PROCESSED_DIR | typeof FAILED_DIR,
    outcome: ImportOutcome,
  ): Promise<void> {
    const { dir } = this.options;
    const movedAs = await moveEntry(dir, name, to);
    this.tracked.delete(name);
    let note = outcome.note;
    if (outcome.importId !== undefined) {
      try {
        await this.options.writeReport(outcome.importId, reportPath(dir, to, movedAs));
      } catch (error) {
        this.options.logger.warn({ err: error, file: name }, 'could not write a report');
        const why = error instanceof Error ? error.message : String(error);
        note =
          `${note ? `${note}\n` : ''}the report could not be written (${why}); ` +
          `read it with: porter report ${outcome.importId}`;
      }
    }
    if (note !== undefined) await writeNote(dir, to, movedAs, note);
    this.emit({
      type: 'moved',
      name,
      to,
      movedAs,
      importId: outcome.importId,
      state: outcome.state,
      note,
    });
  }

  private emit(event: WatchEvent): void {
    this.options.onEvent?.(event);
  }
}

async function digest(handle: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of handle.createReadStream({ start: 0, autoClose: false })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}
