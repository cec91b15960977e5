import { describe, expect, it } from 'vitest';
import { mapConcurrent } from '../../src/util/concurrency.js';

describe('mapConcurrent', () => {
  it('keeps the input order with calls in flight at once', async () => {
    let inFlight = 0;
    let most = 0;
    const out = await mapConcurrent([5, 1, 4, 2, 3], 2, async (value) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await Promise.resolve();
      inFlight--;
      return value * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });

  it('starts no new call after a rejection', async () => {
    const started: number[] = [];
    await expect(
      mapConcurrent([1, 2, 3, 4, 5, 6], 2, async (value) => {
        started.push(value);
        await Promise.resolve();
        if (value === 2) throw new Error('lookup failed');
        return value;
      }),
    ).rejects.toThrow('lookup failed');
    expect(started.length).toBeLessThanOrEqual(3);
  });
});
