/**
 * The audit events of the API's state-changing routes (src/auth/route-roles.ts names them).
 * An HTTP action is not one Redis step, so it writes two events: `intent` before the handler
 * runs (after the principal was allowed), and `result` with the same `actionId` once the answer
 * is sent, with the status, the error code and what the answer named (ids, target, mode,
 * counts). A process killed in between leaves the intent: the action may have happened, and
 * the trail says who asked. A refused request (401, 403, a field the route does not take)
 * writes one `done` event. An intent always gets its result: a request that matches no route
 * writes neither. The queue dashboard's actions say `via: board` in what they name.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PorterContext } from '../app/context.js';
import { securityOf } from '../app/security.js';
import type { Principal } from '../auth/principal.js';
import { routeRule, type RouteRule } from '../auth/route-roles.js';
import { whoOf, type AuditEvent } from '../audit/audit-event.js';
import { newActionId } from '../audit/audit-log.js';
import { outcomeOfStatus } from '../audit/outcome.js';
import { BOARD_PATH } from './access.js';
import { actorOf } from './request-actor.js';

const summaries = new WeakMap<FastifyRequest, { what: Record<string, unknown>; code?: string }>();

const WHAT_KEYS = [
  'id',
  'name',
  'state',
  'kind',
  'resource',
  'mode',
  'dryRun',
  'target',
  'total',
  'counts',
  'applyOf',
  'retryOf',
  'undoOf',
  'folder',
  'cron',
  'every',
];

/**
 * What a request names and an answer does not: the directory source a source import reads (an
 * import's answer has a `source` of its own, the file's name).
 */
const REQUEST_KEYS = [...WHAT_KEYS, 'source'];

/** What a request names before it runs: its path ids and the options it gives. */
function requestWhat(request: FastifyRequest): Record<string, unknown> {
  const what: Record<string, unknown> = {};
  // the queue dashboard's buttons act on the queues themselves, not through porter's routes
  if (request.routeOptions.url?.startsWith(`${BOARD_PATH}/`)) what.via = 'board';
  const params = (request.params ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(params))
    if (typeof value === 'string') what[key] = value;
  for (const source of [request.query, request.body]) {
    if (
      !source ||
      typeof source !== 'object' ||
      typeof (source as { pipe?: unknown }).pipe === 'function'
    )
      continue;
    for (const key of REQUEST_KEYS) {
      const value = (source as Record<string, unknown>)[key];
      if (value !== undefined && typeof value !== 'object') what[key] = value;
    }
  }
  return what;
}

/** What an answer names: the job's id, state, target, mode and counts. */
function answerWhat(payload: unknown): { what: Record<string, unknown>; code?: string } {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return { what: {} };
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    return { what: {} };
  }
  const error = body.error as { code?: string } | undefined;
  if (error) return { what: {}, code: error.code };
  const what: Record<string, unknown> = {};
  for (const key of WHAT_KEYS) {
    const value = body[key];
    if (value !== undefined && (typeof value !== 'object' || key === 'counts')) what[key] = value;
  }
  const options = body.options as Record<string, unknown> | undefined;
  if (options && typeof options === 'object') {
    for (const key of ['target', 'mode', 'dryRun', 'resource']) {
      if (options[key] !== undefined) what[key] = options[key];
    }
  }
  const request = body.request as Record<string, unknown> | undefined;
  if (request && typeof request === 'object' && request.target !== undefined)
    what.target = request.target;
  return { what };
}

/** Writes the `done` event of a sign-out that ended a session (the route knows whether one did). */
export async function auditSignOut(
  context: PorterContext,
  request: FastifyRequest,
  principal: Principal,
): Promise<void> {
  await securityOf(context).audit.append({
    at: new Date().toISOString(),
    action: 'signout',
    phase: 'done',
    actionId: newActionId(),
    who: whoOf(principal),
    from: actorOf(request).from,
    what: requestWhat(request),
    result: { ok: true, outcome: 'ok' },
  });
}

export function registerAuditHooks(app: FastifyInstance, context: PorterContext): void {
  const { audit } = securityOf(context);
  // a request that matches no route changes nothing, and a public route writes its own events
  const ruleOf = (request: FastifyRequest): RouteRule | undefined =>
    request.routeOptions.config?.access === 'public' || request.routeOptions.url === undefined
      ? undefined
      : routeRule(request.method, request.routeOptions.url);

  app.addHook('preHandler', async (request) => {
    const rule = ruleOf(request);
    if (!rule?.action || rule.audit === 'refusals') return;
    const actor = actorOf(request);
    actor.actionId = newActionId();
    await audit.append({
      at: new Date().toISOString(),
      action: rule.action,
      phase: 'intent',
      actionId: actor.actionId,
      who: whoOf(actor.principal),
      from: actor.from,
      what: requestWhat(request),
    });
  });

  app.addHook('onSend', async (request, _reply, payload) => {
    if (ruleOf(request)?.action) summaries.set(request, answerWhat(payload));
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const rule = ruleOf(request);
    const actor = actorOf(request);
    // an intent gets its result; without one, only a refusal is written (a read has no action)
    const intent = actor.actionId;
    if (!rule?.action || (intent === undefined && reply.statusCode < 400)) return;
    const answer = summaries.get(request) ?? { what: {} };
    const created = actor.created.length > 0;
    const event: AuditEvent = {
      at: new Date().toISOString(),
      action: rule.action,
      phase: intent ? 'result' : 'done',
      actionId: intent ?? newActionId(),
      who: whoOf(actor.principal),
      from: actor.from,
      what: {
        ...requestWhat(request),
        ...answer.what,
        ...(created ? { created: actor.created } : {}),
      },
      result: {
        ok: reply.statusCode < 400,
        outcome: outcomeOfStatus(reply.statusCode, created),
        status: reply.statusCode,
        ...(answer.code ? { code: answer.code } : {}),
      },
    };
    try {
      await audit.append(event);
    } catch (error) {
      request.log.error({ err: error, action: rule.action }, 'audit event not written');
    }
  });
}
