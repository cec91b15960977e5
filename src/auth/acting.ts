/**
 * Who the current action is done by, carried along the call (AsyncLocalStorage) from the HTTP
 * request or the CLI command to the use cases: an import records who started it, a target-limited
 * token is refused another target, an approval checks four eyes. Work done outside any request or
 * command has no actor until it names one: a worker's job acts as whoever it works for (a
 * migration's starter, a schedule, a watched folder), never as the worker's own process.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from './principal.js';

export interface Actor {
  principal?: Principal;
  /** Where the request came from. */
  from?: { address?: string; userAgent?: string };
  /** The audit action this work belongs to. */
  actionId?: string;
  /** Ids the action created (imports), for its audit event. */
  created: string[];
  /** What the work came to, once known, for its result event. */
  ended?: EndedWork;
}

/** What a piece of work came to: its job's id, state and counts, or the code of its failure. */
export interface EndedWork {
  id?: string;
  state?: string;
  counts?: Record<string, number>;
  /** The error code of a failure the work reported itself rather than threw. */
  code?: string;
}

const storage = new AsyncLocalStorage<Actor>();

/** Runs `body` as `actor`. */
export function runAs<T>(actor: Actor, body: () => T): T {
  return storage.run(actor, body);
}

/**
 * Runs `body` outside any actor: what it starts (a worker's loops, and every job they take) is
 * nobody's until a job names its own principal. A worker started by `porter worker` would else
 * carry the command's `cli:<user>` into every job it runs.
 */
export function runWithoutActor<T>(body: () => T): T {
  return storage.exit(body);
}

/** The actor of the work in progress, if any. */
export function currentActor(): Actor | undefined {
  return storage.getStore();
}

/** The principal of the work in progress, if any. */
export function currentPrincipal(): Principal | undefined {
  return storage.getStore()?.principal;
}

/** Notes what the work in progress came to (over what was noted before). */
export function noteEnded(ended: EndedWork): void {
  const actor = storage.getStore();
  if (actor) actor.ended = { ...actor.ended, ...ended };
}
