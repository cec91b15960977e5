/**
 * When a failed delivery is tried again: after the base delay, doubled each time up to the
 * largest delay, for as many attempts as reach the retry window (a day by default: 30 s, 1 min,
 * 2 min … then hourly, 31 attempts).
 */

export interface RetrySchedule {
  /** Delay before the second attempt. */
  baseMs: number;
  /** Largest delay between two attempts. */
  maxMs: number;
  /** Attempts are made until at least this long after the first. */
  windowMs: number;
}

/** The delay after the `attemptsMade`-th failed attempt (1 for the first). */
export function retryDelay(schedule: RetrySchedule, attemptsMade: number): number {
  const exponent = Math.min(Math.max(attemptsMade - 1, 0), 40);
  return Math.min(schedule.baseMs * 2 ** exponent, schedule.maxMs);
}

/** Attempts in all (the first included) so that the last one comes at or after the window. */
export function retryAttempts(schedule: RetrySchedule): number {
  let waited = 0;
  let attempts = 1;
  while (waited < schedule.windowMs) {
    waited += retryDelay(schedule, attempts);
    attempts += 1;
  }
  return attempts;
}
