/**
 * Files that appear whole or not at all: written under a temporary name in the same
 * directory, hashed (sha256) and counted while written, flushed to disk, then renamed.
 * A failure removes the temporary file, so no reader ever sees half a file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

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

/** A pass-through stage that hashes and counts the bytes going by. */
class DigestStage extends Transform {
  private readonly hash = createHash('sha256');
  bytes = 0;

  override _transform(
    chunk: Buffer | string,
    encoding: BufferEncoding,
    callback: (error?: Error | null, data?: Buffer) => void,
  ): void {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    this.hash.update(buffer);
    this.bytes += buffer.length;
    callback(null, buffer);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

/**
 * Writes what `source` produces, through `stages`, to `dir/name`, atomically.
 * Resolves with its size and sha256; on any failure nothing is left under either name.
 */
export async function writeFileAtomically(
  dir: string,
  name: string,
  source: Readable,
  stages: NodeJS.ReadWriteStream[] = [],
  signal?: AbortSignal,
): Promise<WrittenFile> {
  const temp = join(dir, tempName(name));
  try {
    const digest = new DigestStage();
    const out = createWriteStream(temp, { flags: 'wx', highWaterMark: 256 * 1024 });
    await pipeline([source, ...stages, digest, out], { signal });
    await syncPath(temp, 'r+');
    await rename(temp, join(dir, name));
    await syncPath(dir, 'r').catch(() => {}); // some file systems cannot sync a directory
    return { name, bytes: digest.bytes, sha256: digest.digest() };
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
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
