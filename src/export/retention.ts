/**
 * `--keep N`: after a successful scheduled run, runs of the same schedule beyond the N newest
 * are removed, but only runs older than the current one: the current run and any run newer
 * than it (a later run that finished first) are never candidates, so a slow run can never
 * remove a newer one. Only directories porter made are candidates: the name is an export id
 * and the manifest is porter's, names this schedule and this id. Only the files the manifest
 * lists (and the manifest) are deleted, then the directory if that left it empty; anything
 * else in it stays, and so does the directory.
 */
import { readdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE } from './export-plan.js';
import { isValidExportId } from './export-id.js';
import { readManifest } from './manifest.js';

export interface RetentionResult {
  /** Run ids whose files were removed. */
  removed: string[];
  /** Run directories left in place because they held files porter did not write. */
  keptForeign: string[];
}

/** The time part of an export id (`exp_<time>_…`): ids compare by it, oldest first. */
function timeOf(id: string): string {
  return id.slice(4, 23);
}

/** Whether run `id` began strictly before run `currentId`. */
export function isOlderRun(id: string, currentId: string): boolean {
  return timeOf(id) < timeOf(currentId);
}

/**
 * Keeps the `keep` newest completed runs of `schedule` in `scheduleDir` (current included);
 * of the others, removes only those older than the current run.
 */
export async function applyRetention(options: {
  scheduleDir: string;
  schedule: string;
  keep: number;
  currentId: string;
}): Promise<RetentionResult> {
  const { scheduleDir, schedule, keep, currentId } = options;
  const result: RetentionResult = { removed: [], keptForeign: [] };
  if (!Number.isInteger(keep) || keep < 1) return result;
  const entries = await readdir(scheduleDir, { withFileTypes: true }).catch(() => []);
  const runs: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !isValidExportId(entry.name)) continue;
    const manifest = await readManifest(join(scheduleDir, entry.name));
    if (manifest?.id === entry.name && manifest.schedule === schedule) runs.push(entry.name);
  }
  // ids sort by time; the current run counts as one of the kept, whatever its place
  if (!runs.includes(currentId)) runs.push(currentId);
  runs.sort().reverse();
  // beyond the `keep` newest, only runs that began before the current one may go: the current
  // run and anything newer (a later run that finished first) always stay
  const older = runs.slice(keep).filter((id) => isOlderRun(id, currentId));
  for (const id of older) {
    const dir = join(scheduleDir, id);
    const manifest = await readManifest(dir);
    if (!manifest) continue;
    for (const file of manifest.files) {
      // names from a manifest are joined only when they are plain file names
      if (/^[^/\\]+$/.test(file.name) && file.name !== '.' && file.name !== '..') {
        await unlink(join(dir, file.name)).catch(() => {});
      }
    }
    await unlink(join(dir, MANIFEST_FILE)).catch(() => {});
    try {
      await rmdir(dir);
    } catch {
      result.keptForeign.push(id);
    }
    result.removed.push(id);
  }
  return result;
}
