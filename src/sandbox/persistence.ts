/**
 * The data file: a snapshot (`FILE`) and a journal beside it (`FILE.journal`). Every committed
 * write appends one journal entry holding its changes, so the cost of a write is the size of
 * the write, not of the state; a write request is answered once its entry is on disk. When the
 * journal outgrows both the snapshot and `compactJournalBytes`, a compaction writes a new
 * snapshot in the background and drops the journal segments it holds: writes keep being
 * journaled meanwhile, and over time the disk sees at most about twice what was written.
 *
 * Start-up loads the snapshot, then replays the journal's segments and the live journal,
 * skipping the entries the snapshot already holds (each snapshot names its last entry).
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../util/logger.js';
import { Journal, segmentsOf } from './journal.js';
import { changeText, entryText, replayJournal } from './journal-entries.js';
import { loadSnapshot, writeSnapshot } from './snapshot-file.js';
import type { SandboxStore, StoreChange } from './store.js';

/** How the data file is kept. */
export interface PersistenceOptions {
  /**
   * The journal is folded into a new snapshot once it is larger than both this and the
   * snapshot. @defaultValue 64 MiB
   */
  compactJournalBytes?: number;
}

export const DEFAULT_COMPACT_JOURNAL_BYTES = 64 * 1024 * 1024;

/** Journals the store's changes to the data file and compacts it now and then. */
export class Persistence {
  private readonly journal: Journal;
  /** Changes made since the last entry was sealed, as journal text. */
  private pending: string[] = [];
  /** The last entry sealed. */
  private seq: number;
  /** The last entry the snapshot on disk holds, and that snapshot's size. */
  private snapshotSeq: number;
  private snapshotBytes: number;
  /** The highest entry whose write failed: until a snapshot holds it, writes wait for one. */
  private failedSeq = 0;
  /** Journal size at which the next background compaction starts. */
  private compactAtBytes = 0;
  private compacting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly observer = (change: StoreChange): void => {
    this.pending.push(changeText(change));
  };

  private constructor(
    readonly file: string,
    private readonly store: SandboxStore,
    private readonly logger: Logger,
    private readonly compactJournalBytes: number,
    loaded: { seq: number; snapshotSeq: number; snapshotBytes: number; journal: Journal },
  ) {
    this.seq = loaded.seq;
    this.snapshotSeq = loaded.snapshotSeq;
    this.snapshotBytes = loaded.snapshotBytes;
    this.journal = loaded.journal;
    this.scheduleNextCompaction(0);
    store.observe(this.observer);
  }

  /** Loads `file` and its journal into the empty store; later changes are journaled. */
  static async open(
    file: string,
    store: SandboxStore,
    logger: Logger,
    options: PersistenceOptions = {},
  ): Promise<Persistence> {
    const directory = dirname(file);
    await mkdir(directory, { recursive: true });
    const names = await readdir(directory);
    await removeStaleTemps(file, names);
    const snapshot = names.includes(basename(file))
      ? await loadSnapshot(file, store)
      : { journalSeq: 0, bytes: 0 };
    const journalFile = `${file}.journal`;
    const segments = segmentsOf(journalFile, names);
    let seq = snapshot.journalSeq;
    for (const segment of segments) {
      seq = (await replayJournal(segment, store, seq, { logger, cutTornTail: false })).lastSeq;
    }
    let live = { bytes: 0, firstSeq: undefined as number | undefined };
    if (names.includes(basename(journalFile))) {
      const replay = await replayJournal(journalFile, store, seq, { logger, cutTornTail: true });
      seq = replay.lastSeq;
      live = { bytes: replay.bytes, firstSeq: replay.firstSeq };
    }
    if (seq > 0 || snapshot.bytes > 0) {
      logger.info({ file, ...store.counts(), journalSeq: seq }, 'sandbox state loaded');
    }
    const journal = new Journal(journalFile, { ...live, segments }, () => store.stats.saves++);
    const persistence = new Persistence(
      file,
      store,
      logger,
      options.compactJournalBytes ?? DEFAULT_COMPACT_JOURNAL_BYTES,
      { seq, snapshotSeq: snapshot.journalSeq, snapshotBytes: snapshot.bytes, journal },
    );
    // Segments left over mean a compaction was cut short: finish the job.
    if (segments.length > 0) persistence.compactInBackground();
    return persistence;
  }

  /** Resolves once the journal holds every change made before the call. */
  async commit(): Promise<void> {
    const written = this.seal();
    try {
      await (written ?? this.journal.flush());
    } catch (error) {
      this.logger.error({ file: this.journal.file, err: error }, 'sandbox journal write failed');
      throw error;
    }
    // After a failed write the journal lacks a change memory holds: only a snapshot settles it.
    while (this.failedSeq > this.snapshotSeq) await this.compact();
    if (!this.closing && this.journal.bytes >= this.compactAtBytes) this.compactInBackground();
  }

  /** Runs `fill` (seeding) without journaling its changes, then saves them in one snapshot. */
  async fill(fill: () => void): Promise<void> {
    await this.compacting?.catch(() => {});
    this.store.observe(undefined);
    try {
      fill();
    } finally {
      this.store.observe(this.observer);
    }
    await this.compact();
  }

  /** Writes what is pending, waits for a compaction in flight, and closes the journal. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      try {
        await this.commit();
        await this.compacting?.catch(() => {});
      } finally {
        this.store.observe(undefined);
        await this.journal.close();
      }
    })());
  }

  /** Turns the pending changes into the next journal entry and queues it. */
  private seal(): Promise<void> | undefined {
    if (this.pending.length === 0) return undefined;
    const seq = ++this.seq;
    const text = entryText(seq, this.pending);
    this.pending = [];
    const written = this.journal.append(seq, text);
    written.catch(() => {
      this.failedSeq = Math.max(this.failedSeq, seq);
    });
    return written;
  }

  /** Writes a snapshot of the state now and drops the journal segments it holds. */
  private compact(): Promise<void> {
    return (this.compacting ??= this.compactOnce().finally(() => {
      this.compacting = undefined;
    }));
  }

  private compactInBackground(): void {
    if (this.compacting) return;
    this.compact().catch((error: unknown) => {
      this.logger.error({ file: this.file, err: error }, 'sandbox data file compaction failed');
      // Try again once the journal has grown by another bound, not on every write.
      this.scheduleNextCompaction(this.journal.bytes);
    });
  }

  private async compactOnce(): Promise<void> {
    const started = performance.now();
    // The snapshot and the entry it names must agree: seal first, then copy, in one tick.
    this.seal();
    const journalSeq = this.seq;
    const snapshot = this.store.snapshot();
    let bytes: number;
    let segments: string[];
    try {
      segments = await this.journal.rotate();
      bytes = await writeSnapshot(this.file, snapshot, journalSeq);
    } finally {
      snapshot.release();
    }
    this.snapshotSeq = journalSeq;
    this.snapshotBytes = bytes;
    await this.journal.dropSegments(segments);
    this.scheduleNextCompaction(0);
    this.store.stats.compactions++;
    this.logger.info(
      { file: this.file, bytes, journalSeq, ms: Math.round(performance.now() - started) },
      'sandbox data file compacted',
    );
  }

  private scheduleNextCompaction(fromBytes: number): void {
    this.compactAtBytes = fromBytes + Math.max(this.compactJournalBytes, this.snapshotBytes);
  }
}

/** Snapshot temp files a crash left behind (`FILE.<pid>.tmp`): never complete, never read. */
async function removeStaleTemps(file: string, names: readonly string[]): Promise<void> {
  const stale = new RegExp(`^${escapeRegExp(basename(file))}\\.\\d+\\.tmp$`);
  for (const name of names) {
    if (stale.test(name)) await rm(join(dirname(file), name), { force: true });
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
