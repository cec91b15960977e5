/** When and how long to wait before trying a call again. */
import { AdminError, classifyFailure } from '../admin/errors.js';

export interface RetryPolicy {
  /** Attempts per call on transient failures, the first one included. @defaultValue 5 */
  maxAttempts: number;
  /** Delay before the first retry, doubled each time. @defaultValue 500 */
  baseDelayMs: number;
  /** Upper bound of one delay, Retry-After included. @defaultValue 30000 */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
};

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1): exponential with full jitter,
 * but never shorter than the server's Retry-After.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  error: unknown,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const jittered = exponential / 2 + random() * (exponential / 2);
  const retryAfter = error instanceof AdminError ? error.retryAfterMs : undefined;
  return Math.min(policy.maxDelayMs, Math.max(jittered, retryAfter ?? 0));
}

/** Whether a failure of a call that is safe to repeat (a read) should be retried. */
export function isRetryableRead(error: unknown): boolean {
  const kind = classifyFailure(error);
  return kind === 'transient' || kind === 'ambiguous';
}

/** Sleeps, or rejects when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs a read with retries on transient and ambiguous failures. */
export async function withReadRetry<T>(
  read: () => Promise<T>,
  policy: RetryPolicy,
  options: {
    signal?: AbortSignal;
    random?: () => number;
    /** Called before each wait; a 429 can make every worker back off (awaited). */
    onRetry?: (error: unknown, delayMs: number) => Promise<void> | void;
  } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= policy.maxAttempts || !isRetryableRead(error)) throw error;
      const delay = retryDelayMs(policy, attempt, error, options.random);
      await options.onRetry?.(error, delay);
      await sleep(delay, options.signal);
    }
  }
}
