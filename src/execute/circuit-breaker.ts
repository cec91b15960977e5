import { AdminError, classifyFailure } from '../admin/errors.js';

/**
 * A server that fails most calls is not hammered: when the share of failed calls over a window
 * passes a threshold, the import pauses; after a cool-down one batch probes the server, and the
 * import resumes once it answers again.
 */
export interface BreakerOptions {
  /** Share of failed calls (0..1) that pauses the import. @defaultValue 0.5 */
  threshold: number;
  /** Calls in the window before the share counts. @defaultValue 10 */
  minCalls: number;
  /** Window the share is taken over, in milliseconds. @defaultValue 30000 */
  windowMs: number;
  /** Wait before a paused import probes the server again. @defaultValue 15000 */
  cooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = {
  threshold: 0.5,
  minCalls: 10,
  windowMs: 30_000,
  cooldownMs: 15_000,
};

/** The reason to pause, when the window's calls say the server is failing. */
export function breakerTrips(
  options: BreakerOptions,
  window: { calls: number; failures: number },
): string | undefined {
  if (window.calls < options.minCalls) return undefined;
  if (window.failures / window.calls < options.threshold) return undefined;
  const seconds = Math.round(options.windowMs / 1000);
  return `the admin server failed ${window.failures} of ${window.calls} calls in ${seconds}s; paused, probing again in ${Math.round(options.cooldownMs / 1000)}s`;
}

/**
 * What the breaker counts for a failed call: true when it says the server is failing (a
 * transient or ambiguous failure), false for an answer (a refusal is an answer), and undefined
 * for a 429, which says the server is alive and asks for less: the shared back-off handles it.
 */
export function breakerOutcome(error: unknown): boolean | undefined {
  if (!(error instanceof AdminError)) return undefined;
  if (error.status === 429) return undefined;
  return classifyFailure(error) !== 'permanent';
}
