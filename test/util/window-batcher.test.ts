/**
 * Items that arrive together leave together (src/util/window-batcher.ts), and a key's work runs
 * one at a time (src/util/keyed-serial.ts). Deterministic: the windows are long and the sends
 * are answered by the test, so nothing waits on a clock.
 */
import { describe, expect, it } from 'vitest';
import { KeyedSerial } from '../../src/util/keyed-serial.js';
import { WindowBatcher } from '../../src/util/window-batcher.js';

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('WindowBatcher', () => {
  it('a full batch leaves at once; while every batch allowed is out, the next gathers', async () => {
    const sent: number[][] = [];
    const answers: Array<{ promise: Promise<void>; resolve(): void }> = [];
    const opened: number[] = [];
    let opens = 0;
    const batcher = new WindowBatcher<number, number>(
      { windowMs: 60_000, maxBatch: 3, inFlight: 1 },
      (batch, window) => {
        sent.push(batch);
        opened.push(window);
        const answer = deferred();
        answers.push(answer);
        return answer.promise;
      },
      () => ++opens,
    );
    for (const item of [1, 2, 3]) batcher.add(item);
    expect(sent).toEqual([[1, 2, 3]]);
    for (const item of [4, 5, 6, 7]) batcher.add(item);
    // the one batch allowed is out: 4–7 wait, whatever their number
    expect(sent).toHaveLength(1);
    answers[0]!.resolve();
    await answers[0]!.promise;
    await new Promise(setImmediate);
    expect(sent).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    answers[1]!.resolve();
    await new Promise(setImmediate);
    // 7 did not fill its window: it waits for the window's end (a minute here)
    expect(sent).toHaveLength(2);
    // each batch carries what its window's opening gave
    expect(opened).toEqual([1, 2]);
    expect(opens).toBe(3);
  });
});

describe('KeyedSerial', () => {
  it("runs a key's work one at a time, in order, and other keys' alongside", async () => {
    const serial = new KeyedSerial<string>();
    const events: string[] = [];
    const first = deferred();
    const a1 = serial.run('a', async () => {
      events.push('a1 start');
      await first.promise;
      events.push('a1 end');
      throw new Error('a1 failed');
    });
    const a2 = serial.run('a', async () => {
      events.push('a2 start');
      return 'a2';
    });
    const b1 = serial.run('b', async () => {
      events.push('b1 start');
      return 'b1';
    });
    expect(await b1).toBe('b1');
    expect(events).toEqual(['a1 start', 'b1 start']);
    first.resolve();
    await expect(a1).rejects.toThrow('a1 failed');
    // a failure does not stop the next
    expect(await a2).toBe('a2');
    expect(events).toEqual(['a1 start', 'b1 start', 'a1 end', 'a2 start']);
    await new Promise(setImmediate);
    expect(serial.size).toBe(0);
  });
});
