/**
 * The files of a watched folder: which names count as arrivals, how one is opened without
 * following links out of the folder, and where it goes once done (`processed/`, `failed/`).
 */
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, writeFile, type FileHandle } from 'node:fs/promises';
import { extname, join } from 'node:path';

export const PROCESSED_DIR = 'processed';
export const FAILED_DIR = 'failed';

/** Names still being written by common tools, or hidden: never imported. */
const PARTIAL_SUFFIXES = ['.tmp', '.part', '.partial', '.crdownload', '.swp', '.filepart', '~'];

/** Whether a name in the folder is ignored: hidden, or a partial file. */
export function isIgnoredName(name: string): boolean {
  if (name.startsWith('.')) return true;
  const lower = name.toLowerCase();
  return PARTIAL_SUFFIXES.some((suffix) => lower.endsWith(suffix));
}

/** A regular file (or a symbolic link, which is never followed) found in the folder. */
export interface FolderEntry {
  name: string;
  size: number;
  mtimeMs: number;
  /** A symbolic link: moved to failed/ with a note, never read. */
  link: boolean;
}

/**
 * The candidate entries of the folder: regular files and symbolic links directly in it (not in
 * subdirectories), minus hidden and partial names. A name that vanished meanwhile is left out.
 */
export async function listEntries(dir: string): Promise<FolderEntry[]> {
  const names = await readdir(dir);
  const entries: FolderEntry[] = [];
  for (const name of names) {
    if (isIgnoredName(name)) continue;
    let stats: Stats;
    try {
      stats = await lstat(join(dir, name));
    } catch {
      continue;
    }
    if (stats.isSymbolicLink()) {
      entries.push({ name, size: stats.size, mtimeMs: stats.mtimeMs, link: true });
    } else if (stats.isFile()) {
      entries.push({ name, size: stats.size, mtimeMs: stats.mtimeMs, link: false });
    }
  }
  return entries;
}

/** Arrival order: oldest modification first, then by name. */
export function byArrival(a: FolderEntry, b: FolderEntry): number {
  return a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * Opens a file of the folder for reading without following a link (a link swapped in since
 * the scan is refused); undefined when it is no longer a regular file.
 */
export async function openEntry(dir: string, name: string): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    return undefined;
  }
  return handle;
}

/** Moves a file of the folder into `sub` (made when missing) under a free name; returns that name. */
export async function moveEntry(dir: string, name: string, sub: string): Promise<string> {
  const target = join(dir, sub);
  await mkdir(target, { recursive: true });
  const extension = extname(name);
  const stem = name.slice(0, name.length - extension.length);
  for (let attempt = 1; ; attempt++) {
    const candidate = attempt === 1 ? name : `${stem}-${attempt}${extension}`;
    // a name taken (a file of the same name done before) is never overwritten
    const taken = await lstat(join(target, candidate)).then(
      () => true,
      () => false,
    );
    if (taken) continue;
    await rename(join(dir, name), join(target, candidate));
    return candidate;
  }
}

/** Writes the note that says why a file is in failed/: `NAME.note.txt` beside it. */
export async function writeNote(
  dir: string,
  sub: string,
  name: string,
  note: string,
): Promise<string> {
  const path = join(dir, sub, `${name}.note.txt`);
  await writeFile(path, `${note}\n`, 'utf8');
  return path;
}

/** Path of the report written beside a moved file: `NAME.report.csv`. */
export function reportPath(dir: string, sub: string, name: string): string {
  return join(dir, sub, `${name}.report.csv`);
}
