import { describe, expect, it } from 'vitest';
import { AdminHttpError } from '../../src/admin/errors.js';
import { retryDelayMs } from '../../src/execute/retry-policy.js';

const policy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 5_000 };
const plain = new Error('boom');

describe('retry delays', () => {
  it('double with each attempt, jittered between half and all of the step', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(policy, attempt, plain, () => 1))).toEqual([
      100, 200, 400, 800,
    ]);
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(policy, attempt, plain, () => 0))).toEqual([
      50, 100, 200, 400,
    ]);
    expect(retryDelayMs(policy, 3, plain, () => 0.5)).toBe(300);
  });

  it('never exceed PORTER_RETRY_MAX_MS', () => {
    expect(retryDelayMs(policy, 20, plain, () => 1)).toBe(5_000);
  });

  it('are never shorter than Retry-After, which is honoured up to the maximum', () => {
    const limited = (seconds: number): AdminHttpError =>
      new AdminHttpError('slow down', {
        method: 'POST',
        path: '/x',
        status: 429,
        retryAfterMs: seconds * 1000,
      });
    expect(retryDelayMs(policy, 1, limited(2), () => 0)).toBe(2_000);
    expect(retryDelayMs(policy, 1, limited(60), () => 0)).toBe(5_000);
  });
});
