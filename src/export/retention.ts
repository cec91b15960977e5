/**
 * `--keep N`: after a successful scheduled run, older runs of the same schedule beyond the N
 * newest are removed. Only directories porter made are candidates: the name is an export id
 * and the manifest is porter's, names this schedule and this id. Only the files the manifest
 * lists (and the manifest) are deleted, then the directory if that left it empty; anything
 * else in it stays, and so does the directory. The current run is never a candidate.
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

/** Keeps the `keep` newest completed runs of `schedule` in `scheduleDir` (current included). */
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
  runs.sort().reverse();
  const older = runs.filter((id) => id !== currentId).slice(Math.max(0, keep - 1));
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
