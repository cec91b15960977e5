/**
 * Work a worker does for someone acts as that someone. A schedule's run or a watched folder's
 * file acts as the schedule or the watch (`schedule:<name>`, `watch:<dir>`), on behalf of whoever
 * added it; a migration's stage imports act as the principal that started the migration. Like an
 * HTTP request, it writes an `intent` audit event before it starts and a `result` event with the
 * same `actionId` after; the imports it creates record who started them and that `actionId`.
 * When the intent cannot be written, the work does not start.
 */
import { runAs, type Actor } from '../auth/acting.js';
import type { Principal } from '../auth/principal.js';
import { whoOf, type AuditEvent } from '../audit/audit-event.js';
import { newActionId } from '../audit/audit-log.js';
import { errorResult } from '../audit/outcome.js';
import type { PorterContext } from './context.js';
import { securityOf } from './security.js';

export interface WorkerActor {
  /** `schedule:<name>` or `watch:<dir>`. */
  name: string;
  via: 'schedule' | 'watch';
  /** Who added the schedule or started the watch, when known. */
  onBehalfOf?: string;
}

/** The principal of a worker's own work: an operator (it starts imports), named after it. */
export function workerPrincipal(worker: WorkerActor): Principal {
  return {
    name: worker.name,
    role: 'operator',
    via: worker.via,
    ...(worker.onBehalfOf ? { onBehalfOf: worker.onBehalfOf } : {}),
  };
}

/** Runs `body` as the worker, between the intent and the result event of `action`. */
export function runAsWorker<T>(
  context: PorterContext,
  worker: WorkerActor,
  action: string,
  what: Record<string, unknown>,
  body: () => Promise<T>,
): Promise<T> {
  return runOnBehalfOf(context, workerPrincipal(worker), action, what, body);
}

/**
 * Runs `body` in a worker as `principal` (undefined: a principal no longer known, which acts as
 * nobody), between the intent and the result event of `action`.
 */
export async function runOnBehalfOf<T>(
  context: PorterContext,
  principal: Principal | undefined,
  action: string,
  what: Record<string, unknown>,
  body: () => Promise<T>,
): Promise<T> {
  const { audit } = securityOf(context);
  const actor: Actor = {
    ...(principal ? { principal } : {}),
    from: { address: 'worker' },
    actionId: newActionId(),
    created: [],
  };
  const intent: AuditEvent = {
    at: new Date().toISOString(),
    action,
    phase: 'intent',
    actionId: actor.actionId!,
    who: whoOf(actor.principal),
    from: actor.from,
    what,
  };
  await audit.append(intent);
  const result = (outcome: AuditEvent['result']): Promise<unknown> =>
    audit
      .append({
        ...intent,
        at: new Date().toISOString(),
        phase: 'result',
        what: { ...what, ...(actor.created.length > 0 ? { created: actor.created } : {}) },
        result: outcome,
      })
      .catch((error: unknown) =>
        context.logger.error({ err: error, action }, 'audit event not written'),
      );
  try {
    const value = await runAs(actor, body);
    await result({ ok: true, outcome: 'ok' });
    return value;
  } catch (error) {
    await result(errorResult(error, actor.created.length > 0));
    throw error;
  }
}
