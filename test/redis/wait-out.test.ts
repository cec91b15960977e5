/**
 * Work that Redis cannot serve now waits and runs again, however often; an abort ends the wait
 * with the last Redis error; any other error ends it at once.
 */
import { describe, expect, it } from 'vitest';
import { waitOutRedis } from '../../src/redis/wait-out.js';

/** Work that throws each error in turn, then returns the number of runs. */
function failing(errors: Error[]): { work: () => Promise<number>; runs: () => number } {
  let runs = 0;
  return {
    work: async () => {
      const error = errors[runs++];
      if (error) throw error;
      return runs;
    },
    runs: () => runs,
  };
}

const fast = { baseDelayMs: 1, maxDelayMs: 2 };

describe('waitOutRedis', () => {
  it('runs again through redirections, TRYAGAIN and lost connections, and tells once', async () => {
    const { work } = failing([
      new Error('TRYAGAIN Multiple keys request during rehashing of slot'),
      new Error('Too many Cluster redirections. Last error: Error: TRYAGAIN'),
      new Error('All keys in the pipeline should belong to the same slots allocation group'),
      new Error('ASK 1234 127.0.0.1:7001'),
      new Error('MOVED 1234 127.0.0.1:7001'),
      new Error('Connection is closed.'),
    ]);
    const waits: string[] = [];
    let served = 0;
    await expect(
      waitOutRedis(work, {
        ...fast,
        onWait: (error) => waits.push(error.message),
        onServed: (runs) => (served = runs),
      }),
    ).resolves.toBe(7);
    expect(waits).toEqual(['TRYAGAIN Multiple keys request during rehashing of slot']);
    expect(served).toBe(7);
  });

  it('any other error ends it at once', async () => {
    const { work, runs } = failing([new Error('ERR unknown command')]);
    await expect(waitOutRedis(work, fast)).rejects.toThrow('ERR unknown command');
    expect(runs()).toBe(1);
  });

  it('an abort ends the wait with the Redis error', async () => {
    const controller = new AbortController();
    const error = new Error('TRYAGAIN Multiple keys request during rehashing of slot');
    const work = async (): Promise<never> => {
      controller.abort('lock lost');
      throw error;
    };
    await expect(waitOutRedis(work, { signal: controller.signal })).rejects.toBe(error);
  });
});
