/**
 * The coordination of shared directory reads, with a runner the test controls: who joins which
 * read, when a read starts, and what a participant that leaves or a failed read does to the others.
 */
import { describe, expect, it } from 'vitest';
import type { SnapshotParticipant, SnapshotSummary } from '../../src/snapshot/build-snapshot.js';
import { snapshotKeys } from '../../src/snapshot/snapshot-keys.js';
import { SharedSnapshotReads, type ReadRunner } from '../../src/snapshot/shared-reads.js';

const participant = (id: string): SnapshotParticipant => ({
  keys: snapshotKeys('test', id),
  uploadKeys: `test:${id}:keys`,
  needs: { groupIndex: true, userIndex: false },
  ttlSeconds: 60,
});

/** A runner whose reads end when the test says; it notes which participants each read had. */
function controlledRunner(): {
  run: ReadRunner;
  reads: string[][];
  started: Promise<void>[];
  finish(index: number, error?: Error): void;
} {
  const reads: string[][] = [];
  const endings: ((error?: Error) => void)[] = [];
  const startedResolvers: (() => void)[] = [];
  const started = Array.from(
    { length: 4 },
    () => new Promise<void>((resolve) => startedResolvers.push(resolve)),
  );
  const run: ReadRunner = (participants) => {
    const index = reads.length;
    reads.push(participants.map((one) => one.uploadKeys.split(':')[1]!));
    startedResolvers[index]!();
    return new Promise<SnapshotSummary[]>((resolve, reject) => {
      endings.push((error) => {
        if (error) reject(error);
        else
          resolve(
            participants.map((_, at) => ({
              takenAt: new Date().toISOString(),
              records: 10,
              kept: at,
              durationMs: 1,
              sharedBy: participants.length,
            })),
          );
      });
    });
  };
  return { run, reads, started, finish: (index, error) => endings[index]!(error) };
}

describe('shared snapshot reads', () => {
  it('imports that ask together share one read; each gets its own summary', async () => {
    const reads = new SharedSnapshotReads(5);
    const runner = controlledRunner();
    const asked = ['a', 'b', 'c'].map((id) => reads.read('t\0users', participant(id), runner.run));
    await runner.started[0];
    expect(runner.reads).toEqual([['a', 'b', 'c']]);
    runner.finish(0);
    const summaries = await Promise.all(asked);
    expect(summaries.map((one) => [one.kept, one.sharedBy])).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
    ]);
  });

  it('one asking while a read runs joins the next read, which starts when it ends', async () => {
    const reads = new SharedSnapshotReads(5);
    const runner = controlledRunner();
    const first = reads.read('t\0users', participant('a'), runner.run);
    await runner.started[0];
    const late = [
      reads.read('t\0users', participant('b'), runner.run),
      reads.read('t\0users', participant('c'), runner.run),
    ];
    expect(reads.waiting).toBe(2);
    // the late ones are not read while the first read runs
    expect(runner.reads).toHaveLength(1);
    runner.finish(0);
    await first;
    await runner.started[1];
    expect(runner.reads).toEqual([['a'], ['b', 'c']]);
    runner.finish(1);
    await Promise.all(late);
  });

  it('another target or resource is read on its own, at the same time', async () => {
    const reads = new SharedSnapshotReads(5);
    const runner = controlledRunner();
    const asked = [
      reads.read('t\0users', participant('a'), runner.run),
      reads.read('t\0groups', participant('b'), runner.run),
      reads.read('u\0users', participant('c'), runner.run),
    ];
    await Promise.all(runner.started.slice(0, 3));
    expect(runner.reads.sort()).toEqual([['a'], ['b'], ['c']]);
    for (const index of [0, 1, 2]) runner.finish(index);
    await Promise.all(asked);
  });

  it('a failed read fails every import that shared it, and the next read is tried anew', async () => {
    const reads = new SharedSnapshotReads(5);
    const runner = controlledRunner();
    const asked = ['a', 'b'].map((id) => reads.read('t\0users', participant(id), runner.run));
    await runner.started[0];
    runner.finish(0, new Error('server refused'));
    for (const one of asked) await expect(one).rejects.toThrow('server refused');
    const again = reads.read('t\0users', participant('c'), runner.run);
    await runner.started[1];
    runner.finish(1);
    await expect(again).resolves.toMatchObject({ records: 10 });
  });

  it('an import whose job ends stops waiting alone: the read goes on for the others', async () => {
    const reads = new SharedSnapshotReads(5);
    const runner = controlledRunner();
    const leaving = new AbortController();
    let readSignal: AbortSignal | undefined;
    let leaverWanted: (() => boolean) | undefined;
    const run: ReadRunner = (participants, signal) => {
      readSignal = signal;
      leaverWanted = participants[0]!.wanted;
      return runner.run(participants, signal);
    };
    const left = reads.read('t\0users', participant('a'), run, leaving.signal);
    const stays = reads.read('t\0users', participant('b'), run, new AbortController().signal);
    await runner.started[0];
    leaving.abort(new Error('job cancelled'));
    await expect(left).rejects.toThrow('job cancelled');
    // the read is not aborted while one still waits for it, and it writes no more for the leaver
    expect(readSignal?.aborted).toBe(false);
    expect(leaverWanted?.()).toBe(false);
    runner.finish(0);
    await expect(stays).resolves.toMatchObject({ sharedBy: 2 });
  });

  it('the read itself is aborted once every import waiting for it has left', async () => {
    const reads = new SharedSnapshotReads(5);
    const runner = controlledRunner();
    const jobs = [new AbortController(), new AbortController()];
    let readSignal: AbortSignal | undefined;
    const run: ReadRunner = (participants, signal) => {
      readSignal = signal;
      return runner.run(participants, signal);
    };
    const asked = jobs.map((job, index) =>
      reads.read('t\0users', participant(String(index)), run, job.signal),
    );
    await runner.started[0];
    jobs[0]!.abort(new Error('first gone'));
    expect(readSignal?.aborted).toBe(false);
    jobs[1]!.abort(new Error('second gone'));
    expect(readSignal?.aborted).toBe(true);
    for (const one of asked) await expect(one).rejects.toThrow(/gone/);
    runner.finish(0);
  });
});
