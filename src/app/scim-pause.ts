/**
 * A SCIM change is not started while its target's calls are paused (a 429 of the DAM made every
 * worker wait out its Retry-After, src/queue/request-gate.ts): the identity provider is answered
 * 429 with the time left, at once, rather than held until the pause ends; nothing was sent, so
 * nothing is half-applied. A change already started when a pause begins waits it out (bounded by
 * the retry policy's longest delay) and finishes.
 */
import { PorterError } from '../errors/porter-error.js';
import type { PorterContext } from './context.js';

export async function refuseWhilePaused(context: PorterContext, targetName: string): Promise<void> {
  const target = context.targets.require(targetName);
  const pausedMs = await context.gateOf(target).pausedFor();
  if (pausedMs <= 0) return;
  const retryAfterSeconds = Math.max(1, Math.ceil(pausedMs / 1000));
  throw new PorterError(
    'PORTER_SCIM_TARGET_PAUSED',
    `the calls to target "${target.name}" are paused for ${retryAfterSeconds}s (the DAM asked to wait); nothing was changed, send it again after Retry-After`,
    { details: { retryAfterSeconds } },
  );
}
