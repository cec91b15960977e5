/**
 * The journal file's writer. Appends are group commits: entries appended while a write runs
 * go out together in the next single write, followed by one fdatasync, and each append's
 * promise resolves only once its bytes are on disk. A failed write is cut back off the file,
 * so the file only ever holds whole entries.
 *
 * Rotation moves the live file aside as a segment (`<journal>.<first seq in it>`) between two
 * writes, so a compaction can fold everything before it into a snapshot and then delete it.
 */
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { syncDirectory } from './snapshot-file.js';

interface Batch {
  texts: string[];
  /** Seq of the batch's first entry. */
  firstSeq: number | undefined;
  done: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Appends entries to one journal file with group commits, and rotates it into segments. */
export class Journal {
  /** Bytes in the live file. */
  bytes: number;
  /** Rotated segments not yet folded into a snapshot, oldest first. */
  readonly segments: string[];
  private handle: FileHandle | undefined;
  private firstSeq: number | undefined;
  private batch = newBatch();
  private rotation: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  private running: Promise<void> | undefined;

  /**
   * `live` describes the file as replay left it; `onWrite` is called after every group write.
   */
  constructor(
    readonly file: string,
    live: { bytes: number; firstSeq: number | undefined; segments: readonly string[] },
    private readonly onWrite: () => void,
  ) {
    this.bytes = live.bytes;
    this.firstSeq = live.firstSeq;
    this.segments = [...live.segments];
  }

  /** Queues entry `seq` (a whole line); resolves once it is written and flushed to disk. */
  append(seq: number, text: string): Promise<void> {
    const batch = this.batch;
    batch.texts.push(text);
    batch.firstSeq ??= seq;
    this.kick();
    return batch.done;
  }

  /** Resolves once everything appended before the call is on disk (or has failed). */
  async flush(): Promise<void> {
    if (this.batch.texts.length > 0) await this.batch.done.catch(() => {});
    await this.running;
  }

  /**
   * Moves the live file aside as a segment before the next write, so entries appended from
   * now on start a new file. Resolves with the segments that existed at that point.
   */
  async rotate(): Promise<string[]> {
    await new Promise<void>((resolve, reject) => {
      this.rotation = { resolve, reject };
      this.kick();
    });
    return [...this.segments];
  }

  /** Deletes segments (folded into a snapshot). */
  async dropSegments(segments: readonly string[]): Promise<void> {
    for (const segment of segments) {
      await rm(segment, { force: true });
      const index = this.segments.indexOf(segment);
      if (index >= 0) this.segments.splice(index, 1);
    }
  }

  /** Writes what is queued and closes the file. */
  async close(): Promise<void> {
    await this.flush();
    await this.handle?.close();
    this.handle = undefined;
  }

  private kick(): void {
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
      if (this.rotation || this.batch.texts.length > 0) this.kick();
    });
  }

  /** One writer at a time: rotations first, then the batch gathered meanwhile. */
  private async drain(): Promise<void> {
    for (;;) {
      const rotation = this.rotation;
      if (rotation) {
        this.rotation = undefined;
        await this.rotateNow().then(rotation.resolve, rotation.reject);
        continue;
      }
      const batch = this.batch;
      if (batch.texts.length === 0) return;
      this.batch = newBatch();
      await this.write(batch).then(batch.resolve, batch.reject);
    }
  }

  private async write(batch: Batch): Promise<void> {
    const data = Buffer.from(batch.texts.join(''), 'utf8');
    this.handle ??= await this.openLive();
    const handle = this.handle;
    try {
      let written = 0;
      while (written < data.length) {
        written += (await handle.write(data, written)).bytesWritten;
      }
      await handle.datasync();
    } catch (error) {
      // Leave only whole entries behind: the next append must not follow half a line.
      await handle.truncate(this.bytes).catch(() => {});
      throw error;
    }
    this.bytes += data.length;
    this.firstSeq ??= batch.firstSeq;
    this.onWrite();
  }

  private async openLive(): Promise<FileHandle> {
    const handle = await open(this.file, 'a');
    // A new file's directory entry must be durable too, or an fdatasync'd entry could vanish.
    await syncDirectory(dirname(this.file));
    return handle;
  }

  private async rotateNow(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    if (this.firstSeq === undefined) {
      // Nothing in the live file worth keeping (it may not even exist).
      await rm(this.file, { force: true });
    } else {
      const segment = `${this.file}.${this.firstSeq}`;
      await rename(this.file, segment);
      this.segments.push(segment);
    }
    this.bytes = 0;
    this.firstSeq = undefined;
  }
}

/** The segment files of `journal` in `names` (a directory listing), oldest first. */
export function segmentsOf(journal: string, names: readonly string[]): string[] {
  const prefix = `${basename(journal)}.`;
  return names
    .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
    .map((name) => ({ name, seq: Number(name.slice(prefix.length)) }))
    .sort((a, b) => a.seq - b.seq)
    .map(({ name }) => join(dirname(journal), name));
}

function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A batch nobody waits on (flush swallowed it) must not count as an unhandled rejection.
  done.catch(() => {});
  return { texts: [], firstSeq: undefined, done, resolve, reject };
}
