/**
 * Imports of one target and resource that a worker prepares at about the same time share one
 * read of the directory: the first to ask waits a moment for others, then one streamed GET makes
 * every one's snapshot (buildSnapshots). One asking while a read runs waits for it to end and
 * joins the next one, so a snapshot is never older than the preparation it serves, and a worker
 * streams one directory per target and resource however many imports it prepares: its memory does
 * not grow with them.
 */
import type { SnapshotParticipant, SnapshotSummary } from './build-snapshot.js';

/** How long the first import of a read waits for others to join it. */
export const GATHER_MS = 25;

/**
 * What runs the read: one snapshot summary per participant, in order. `signal` aborts once every
 * participant's own signal has.
 */
export type ReadRunner = (
  participants: SnapshotParticipant[],
  signal: AbortSignal,
) => Promise<SnapshotSummary[]>;

interface Member {
  participant: SnapshotParticipant;
  signal?: AbortSignal;
  resolve(summary: SnapshotSummary): void;
  reject(error: unknown): void;
}

interface Gathering {
  members: Member[];
  run: ReadRunner;
}

export class SharedSnapshotReads {
  /** Per key, the read still gathering imports; it starts once the running one has ended. */
  private readonly gathering = new Map<string, Gathering>();
  /** Per key, the read running now. */
  private readonly running = new Map<string, Promise<unknown>>();

  constructor(private readonly gatherMs = GATHER_MS) {}

  /**
   * Joins the next read of `key` (a target and a resource); the first to join gives the runner.
   * `signal` ends this import's wait alone: the read goes on for the others.
   */
  read(
    key: string,
    participant: SnapshotParticipant,
    run: ReadRunner,
    signal?: AbortSignal,
  ): Promise<SnapshotSummary> {
    signal?.throwIfAborted();
    return new Promise<SnapshotSummary>((resolve, reject) => {
      const member: Member = {
        participant: { ...participant, wanted: () => signal?.aborted !== true },
        signal,
        resolve,
        reject,
      };
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      const open = this.gathering.get(key);
      if (open) {
        open.members.push(member);
        return;
      }
      const next: Gathering = { members: [member], run };
      this.gathering.set(key, next);
      void this.start(key, next);
    });
  }

  /** Imports reading now or waiting to, over every key (for tests and metrics). */
  get waiting(): number {
    let count = 0;
    for (const gathering of this.gathering.values()) count += gathering.members.length;
    return count;
  }

  private async start(key: string, gathering: Gathering): Promise<void> {
    await Promise.all([
      new Promise((resolve) => setTimeout(resolve, this.gatherMs)),
      this.running.get(key)?.catch(() => undefined),
    ]);
    this.gathering.delete(key);
    const members = gathering.members.filter((member) => member.signal?.aborted !== true);
    if (members.length === 0) return;
    const done = gathering.run(
      members.map((member) => member.participant),
      whenAllAbort(members.map((member) => member.signal)),
    );
    this.running.set(key, done);
    try {
      const summaries = await done;
      members.forEach((member, index) => member.resolve(summaries[index]!));
    } catch (error) {
      for (const member of members) member.reject(error);
    } finally {
      if (this.running.get(key) === done) this.running.delete(key);
    }
  }
}

/** A signal that aborts once each of these has (never, when one of them is missing). */
function whenAllAbort(signals: readonly (AbortSignal | undefined)[]): AbortSignal {
  const all = new AbortController();
  if (signals.some((signal) => signal === undefined)) return all.signal;
  let left = signals.length;
  for (const signal of signals as AbortSignal[]) {
    signal.addEventListener(
      'abort',
      () => {
        left -= 1;
        if (left === 0) all.abort(signal.reason);
      },
      { once: true },
    );
  }
  return all.signal;
}
