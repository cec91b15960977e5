/**
 * Who the current action is done by, carried along the call (AsyncLocalStorage) from the HTTP
 * request or the CLI command to the use cases: an import records who started it, a target-limited
 * token is refused another target, an approval checks four eyes. Work done outside any request or
 * command (a worker's scheduled run) has no actor.
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
}

const storage = new AsyncLocalStorage<Actor>();

/** Runs `body` as `actor`. */
export function runAs<T>(actor: Actor, body: () => T): T {
  return storage.run(actor, body);
}

/** The actor of the work in progress, if any. */
export function currentActor(): Actor | undefined {
  return storage.getStore();
}

/** The principal of the work in progress, if any. */
export function currentPrincipal(): Principal | undefined {
  return storage.getStore()?.principal;
}
