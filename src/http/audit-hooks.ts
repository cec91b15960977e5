/**
 * The audit events of the API's state-changing routes (src/auth/route-roles.ts names them).
 * An HTTP action is not one Redis step, so it writes two events: `intent` before the handler
 * runs (after the principal was allowed), and `result` with the same `actionId` once the answer
 * is sent, with the status, the error code and what the answer named (ids, target, mode,
 * counts). A process killed in between leaves the intent: the action may have happened, and
 * the trail says who asked. A refused request (401, 403) writes one `done` event.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PorterContext } from '../app/context.js';
import { securityOf } from '../app/security.js';
import { routeRule } from '../auth/route-roles.js';
import { whoOf, type AuditEvent } from '../audit/audit-event.js';
import { newActionId } from '../audit/audit-log.js';
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

/** What a request names before it runs: its path ids and the options it gives. */
function requestWhat(request: FastifyRequest): Record<string, unknown> {
  const what: Record<string, unknown> = {};
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
    for (const key of WHAT_KEYS) {
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

export function registerAuditHooks(app: FastifyInstance, context: PorterContext): void {
  const { audit } = securityOf(context);
  const actionOf = (request: FastifyRequest): string | undefined =>
    request.routeOptions.config?.access === 'public'
      ? undefined
      : routeRule(request.method, request.routeOptions.url ?? request.url).action;

  app.addHook('preHandler', async (request) => {
    const action = actionOf(request);
    if (!action) return;
    const actor = actorOf(request);
    actor.actionId = newActionId();
    await audit.append({
      at: new Date().toISOString(),
      action,
      phase: 'intent',
      actionId: actor.actionId,
      who: whoOf(actor.principal),
      from: actor.from,
      what: requestWhat(request),
    });
  });

  app.addHook('onSend', async (request, _reply, payload) => {
    if (actionOf(request)) summaries.set(request, answerWhat(payload));
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const action = actionOf(request);
    // a route that does not exist has no action; neither has a read
    if (!action || request.routeOptions.url === undefined) return;
    const actor = actorOf(request);
    const answer = summaries.get(request) ?? { what: {} };
    const ok = reply.statusCode < 400;
    const event: AuditEvent = {
      at: new Date().toISOString(),
      action,
      phase: actor.actionId ? 'result' : 'done',
      actionId: actor.actionId ?? newActionId(),
      who: whoOf(actor.principal),
      from: actor.from,
      what: {
        ...requestWhat(request),
        ...answer.what,
        ...(actor.created.length > 0 ? { created: actor.created } : {}),
      },
      result: { ok, status: reply.statusCode, ...(answer.code ? { code: answer.code } : {}) },
    };
    try {
      await audit.append(event);
    } catch (error) {
      request.log.error({ err: error, action }, 'audit event not written');
    }
  });
}
