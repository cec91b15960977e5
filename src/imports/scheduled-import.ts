/**
 * One run of an import schedule: read the file as it is at that moment, compare its sha256
 * with the content of the schedule's last import, and start an import unless nothing changed.
 * The file is opened once: the digest and the import read the same file even when the system
 * that writes it replaces it meanwhile.
 */
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import type { ImportInfo, ImportOptions, ImportState } from '../model/import.js';
import type { ScheduleHistory, ScheduleRun } from './schedule-history.js';

export interface ScheduledImportRun {
  /** Schedule name. */
  name: string;
  file: string;
  options: ImportOptions;
  evenUnchanged?: boolean;
  /** The BullMQ job of the run: a job run again after a crash does not import twice. */
  jobId?: string;
}

export interface ScheduledImportDeps {
  history: ScheduleHistory;
  /** Starts an import of the stream (the same core as `porter import`). */
  startImport(
    source: Readable,
    fileName: string,
    options: ImportOptions,
    onCreated: (info: ImportInfo) => void,
  ): Promise<ImportInfo>;
  /** The state of an import, undefined once it expired. */
  importState(importId: string): Promise<ImportState | undefined>;
  now?: () => Date;
}

/** An import in these states did not do its work: the same content is imported again. */
const REDO_STATES: ReadonlySet<string> = new Set(['failed', 'cancelled']);

function errorText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

async function digest(handle: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of handle.createReadStream({ start: 0, autoClose: false })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}

/** Runs the schedule once; the run is added to the schedule's history and returned. */
export async function runScheduledImport(
  run: ScheduledImportRun,
  deps: ScheduledImportDeps,
): Promise<ScheduleRun> {
  const { history } = deps;
  const at = (deps.now?.() ?? new Date()).toISOString();
  const record = async (entry: Omit<ScheduleRun, 'at' | 'jobId'>): Promise<ScheduleRun> => {
    const full: ScheduleRun = { at, ...(run.jobId ? { jobId: run.jobId } : {}), ...entry };
    await history.add(run.name, full);
    return full;
  };
  let handle: FileHandle;
  try {
    handle = await open(run.file, 'r');
  } catch (error) {
    return record({ outcome: 'failed', note: `cannot read ${run.file} (${errorText(error)})` });
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      return record({ outcome: 'failed', note: `${run.file} is not a file` });
    }
    const sha256 = await digest(handle);
    const last = await history.last(run.name);
    if (last && run.jobId !== undefined && last.jobId === run.jobId && last.importId) {
      // this job ran before a crash and started its import: that import is the run's
      return { at, jobId: run.jobId, outcome: 'imported', sha256, importId: last.importId };
    }
    if (!run.evenUnchanged && last?.sha256 === sha256 && last.importId) {
      const state = await deps.importState(last.importId);
      // an import that expired from Redis had run: only a failed or cancelled one is redone
      if (state === undefined || !REDO_STATES.has(state)) {
        return record({
          outcome: 'unchanged',
          sha256,
          note: `not imported: the file is unchanged since import ${last.importId} (${state ?? 'expired'})`,
        });
      }
    }
    await history.setLast(run.name, { sha256, jobId: run.jobId });
    let importId: string | undefined;
    try {
      await deps.startImport(
        handle.createReadStream({ start: 0, autoClose: false }),
        basename(run.file),
        run.options,
        (created) => {
          importId = created.id;
          // noted at once so that a crash from here on does not import the file twice; the
          // same note is written again below, so a failure here is not fatal
          history
            .setLast(run.name, { sha256, jobId: run.jobId, importId: created.id })
            .catch(() => {});
        },
      );
    } catch (error) {
      return record({
        outcome: 'failed',
        sha256,
        ...(importId ? { importId } : {}),
        note: `the import could not receive the file: ${errorText(error)}`,
      });
    }
    await history.setLast(run.name, { sha256, jobId: run.jobId, importId });
    return record({ outcome: 'imported', sha256, importId });
  } finally {
    await handle.close().catch(() => {});
  }
}
