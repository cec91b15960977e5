/**
 * Files that appear whole or not at all: written under a temporary name in the same
 * directory, hashed (sha256) and counted while written, flushed to disk, then renamed.
 * A failure removes the temporary file, so no reader ever sees half a file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export interface WrittenFile {
  name: string;
  bytes: number;
  sha256: string;
}

/** Temporary names: `.<name>.<random>.porter-tmp`. */
const TEMP_PATTERN = /^\.(.+)\.[0-9a-f]{12}\.porter-tmp$/;

/** The temporary name for a file, unique per attempt. */
export function tempName(name: string): string {
  return `.${name}.${randomBytes(6).toString('hex')}.porter-tmp`;
}

/** What a file is made of: text (written as UTF-8) or bytes, in order. */
export type FileParts = AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>;

/**
 * Writes `parts` to `dir/name`, atomically. One write is on its way to the disk while the next
 * part is made, so writing overlaps the work before it and memory holds two parts at most.
 * Resolves with its size and sha256; on any failure nothing is left under either name.
 */
export async function writeFileAtomically(
  dir: string,
  name: string,
  parts: FileParts,
  signal?: AbortSignal,
): Promise<WrittenFile> {
  const temp = join(dir, tempName(name));
  let handle: FileHandle | undefined;
  let writing: Promise<void> = Promise.resolve();
  let writeFailure: { error: unknown } | undefined;
  try {
    handle = await open(temp, 'wx');
    const file = handle;
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const part of parts) {
      signal?.throwIfAborted();
      const buffer = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
      hash.update(buffer);
      bytes += buffer.length;
      await writing;
      if (writeFailure) throw writeFailure.error;
      // caught at once: the failure is thrown at the next part, never left unhandled
      writing = writeAll(file, buffer).catch((error: unknown) => {
        writeFailure = { error };
      });
    }
    await writing;
    if (writeFailure) throw writeFailure.error;
    signal?.throwIfAborted();
    await file.sync();
    await file.close();
    handle = undefined;
    await rename(temp, join(dir, name));
    await syncPath(dir, 'r').catch(() => {}); // some file systems cannot sync a directory
    return { name, bytes, sha256: hash.digest('hex') };
  } catch (error) {
    await writing;
    await handle?.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
  }
}

/** Writes all of `buffer` at the file's position (a write may take only part of it). */
async function writeAll(handle: FileHandle, buffer: Uint8Array): Promise<void> {
  for (let offset = 0; offset < buffer.length;) {
    const { bytesWritten } = await handle.write(buffer, offset);
    offset += bytesWritten;
  }
}

/** Flushes a file (or, opened 'r', a directory after a rename) to disk. */
async function syncPath(path: string, flags: 'r' | 'r+'): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes temporary files a crashed attempt left in `dir`; returns how many. */
export async function removeStaleTempFiles(dir: string): Promise<number> {
  let removed = 0;
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (entry.isFile() && TEMP_PATTERN.test(entry.name)) {
      await unlink(join(dir, entry.name)).catch(() => {});
      removed++;
    }
  }
  return removed;
}
