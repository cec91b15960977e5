/**
 * Deliveries are retried for at least a day by default: 30 s, 1 min, 2 min … doubled up to an
 * hour between attempts, as many attempts as reach 24 hours; the queue's jobs carry that count.
 */
import { describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { retryAttempts, retryDelay } from '../../src/notify/retry-schedule.js';
import { deliveryJobOptions } from '../../src/queue/notify-queue.js';

describe('the retry schedule', () => {
  it('reaches a day with the defaults, each delay at most an hour', () => {
    const env = loadEnv({});
    const schedule = {
      baseMs: env.PORTER_NOTIFY_RETRY_BASE_MS,
      maxMs: env.PORTER_NOTIFY_RETRY_MAX_MS,
      windowMs: env.PORTER_NOTIFY_RETRY_HOURS * 3_600_000,
    };
    const attempts = retryAttempts(schedule);
    const delays = Array.from({ length: attempts - 1 }, (_, index) =>
      retryDelay(schedule, index + 1),
    );
    expect(delays.slice(0, 4)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(Math.max(...delays)).toBe(3_600_000);
    const total = delays.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(total - delays.at(-1)!).toBeLessThan(24 * 3_600_000);
    expect(attempts).toBe(31);
    expect(deliveryJobOptions(attempts)).toMatchObject({
      attempts: 31,
      backoff: { type: 'notify' },
    });
  });
});
