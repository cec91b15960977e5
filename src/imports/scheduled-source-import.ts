/**
 * One run of an import schedule that reads a directory source instead of a file: the source is
 * read whole at that moment and its rows imported, through the same code as `porter sync
 * --source` (a read cut short starts no import). There is no "unchanged" skip: a directory has
 * no content digest, and an entry gone from it is what a sync is for. A job run again after a
 * crash does not import twice.
 */
import type { ImportInfo } from '../model/import.js';
import type { ScheduleHistory, ScheduleRun } from './schedule-history.js';

export interface ScheduledSourceRun {
  /** Schedule name. */
  name: string;
  /** The BullMQ job of the run. */
  jobId?: string;
}

export interface ScheduledSourceDeps {
  history: ScheduleHistory;
  /** Reads the source and starts its import (the same core as `porter import --source`). */
  startSourceImport(onCreated: (info: ImportInfo) => void): Promise<ImportInfo>;
  now?: () => Date;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs the schedule once; the run is added to the schedule's history and returned. */
export async function runScheduledSourceImport(
  run: ScheduledSourceRun,
  deps: ScheduledSourceDeps,
): Promise<ScheduleRun> {
  const { history } = deps;
  const at = (deps.now?.() ?? new Date()).toISOString();
  const jobId = run.jobId ? { jobId: run.jobId } : {};
  const record = async (entry: Omit<ScheduleRun, 'at' | 'jobId'>): Promise<ScheduleRun> => {
    const full: ScheduleRun = { at, ...jobId, ...entry };
    await history.add(run.name, full);
    return full;
  };
  const last = await history.last(run.name);
  if (last && run.jobId !== undefined && last.jobId === run.jobId && last.importId) {
    // this job ran before a crash and started its import: that import is the run's
    return { at, ...jobId, outcome: 'imported', importId: last.importId };
  }
  let importId: string | undefined;
  try {
    await deps.startSourceImport((created) => {
      importId = created.id;
      history.setLast(run.name, { ...jobId, importId: created.id }).catch(() => {});
    });
  } catch (error) {
    return record({
      outcome: 'failed',
      ...(importId ? { importId } : {}),
      note: `the source could not be imported: ${errorText(error)}`,
    });
  }
  await history.setLast(run.name, { ...jobId, importId });
  return record({ outcome: 'imported', importId });
}
