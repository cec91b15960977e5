/**
 * The admin routes and the path every request takes through them:
 * rate limit → injected failure (and the drop decision), before the body is read →
 * body parsed → credentials (they may be form fields) → handler (plan, apply) → save →
 * latency → answer. A request picked for a drop is applied, saved and held for the
 * latency like any other; only when it succeeded is its connection destroyed instead of
 * the answer. A refused one (401, 400, 404, …) is answered.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import {
  ADMIN_PATH_PREFIX,
  RESOURCES,
  RESOURCE_NAMES,
  type ResourceName,
} from '../admin/resources.js';
import { aclPlanner, listAcls } from './acls.js';
import type { Authenticator } from './auth.js';
import { SandboxError } from './errors.js';
import type { Faults } from './faults.js';
import { groupPlanner, listGroups } from './groups.js';
import { jsonArray, jsonArrayStream } from './json.js';
import { RequestParams } from './params.js';
import type { Persistence } from './persistence.js';
import type { WriteMethod } from './stats.js';
import type { SandboxStore } from './store.js';
import { listUsers, userPlanner } from './users.js';
import { readRecords, runWrite, type WritePlanner } from './write.js';

/** What the admin routes work with. */
export interface SandboxContext {
  store: SandboxStore;
  faults: Faults;
  auth: Authenticator;
  persistence: Persistence | undefined;
}

/** What a handler produced: the answer's records, and an error to answer instead (partial writes). */
interface Outcome {
  records: Iterable<unknown>;
  changed: boolean;
  error?: SandboxError;
}

const READERS: Record<
  ResourceName,
  (store: SandboxStore, params: RequestParams) => Iterable<unknown>
> = {
  users: listUsers,
  groups: listGroups,
  acls: listAcls,
};
const PLANNERS: Record<ResourceName, (store: SandboxStore) => WritePlanner<unknown>> = {
  users: userPlanner as (store: SandboxStore) => WritePlanner<unknown>,
  groups: groupPlanner as (store: SandboxStore) => WritePlanner<unknown>,
  acls: aclPlanner as (store: SandboxStore) => WritePlanner<unknown>,
};
const WRITE_METHODS: Record<ResourceName, readonly WriteMethod[]> = {
  users: ['PUT', 'POST', 'DELETE'],
  groups: ['PUT', 'POST', 'DELETE'],
  acls: ['PUT'],
};
const ALL_METHODS: readonly HTTPMethods[] = ['PUT', 'POST', 'DELETE', 'PATCH'];

/** Registers GET and the write methods of every resource under /wf/restapi/v2/admin/. */
export function registerAdminRoutes(app: FastifyInstance, context: SandboxContext): void {
  const hooks = faultHooks(context);
  for (const resource of RESOURCE_NAMES) {
    const url = ADMIN_PATH_PREFIX + RESOURCES[resource].path;
    const writeMethods = WRITE_METHODS[resource];
    app.route({
      method: 'GET',
      url,
      ...hooks,
      handler: serve(context, hooks.drops, (params) => ({
        records: READERS[resource](context.store, params),
        changed: false,
      })),
    });
    for (const method of writeMethods) {
      app.route({
        method,
        url,
        ...hooks,
        handler: serve(context, hooks.drops, (params) => write(context, resource, method, params)),
      });
    }
    const allow = ['GET', 'HEAD', ...writeMethods].join(', ');
    const refused = ALL_METHODS.filter((method) => !writeMethods.includes(method as WriteMethod));
    app.route({
      method: refused as HTTPMethods[],
      url,
      handler: async (request) => {
        throw new SandboxError('METHOD_NOT_ALLOWED', `${request.method} is not offered on ${url}`, {
          headers: { allow },
        });
      },
    });
  }
}

/**
 * The fault steps around an admin route. `onRequest` runs before the body is read: it counts
 * the request, applies the rate limit and the injected failure, and decides the drop.
 * `onSend` holds every answer (errors included) for the latency.
 */
function faultHooks(context: SandboxContext): {
  drops: WeakSet<FastifyRequest>;
  onRequest: (request: FastifyRequest) => Promise<void>;
  onSend: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>;
} {
  const { store, faults } = context;
  const drops = new WeakSet<FastifyRequest>();
  return {
    drops,
    onRequest: async (request) => {
      const method = request.method as keyof typeof store.stats.requests;
      if (method in store.stats.requests) store.stats.requests[method]++;
      if (faults.admit().drop) drops.add(request);
    },
    onSend: async (request, _reply, payload) => {
      await faults.delay(request.method);
      return payload;
    },
  };
}

/** One PUT, POST or DELETE: read the records, check the record limit, plan, apply. */
function write(
  context: SandboxContext,
  resource: ResourceName,
  method: WriteMethod,
  params: RequestParams,
): Outcome {
  context.store.stats.writes[resource][method]++;
  const records = readRecords(params.form, RESOURCES[resource].formField);
  context.faults.checkRecordCount(records.length);
  const planner = PLANNERS[resource](context.store);
  const outcome = runWrite(records, method, planner, context.faults.options.batchFailure);
  return { records: outcome.answer, changed: outcome.applied > 0, error: outcome.error };
}

/** Wraps a handler in the auth, save, drop and answer steps every admin request takes. */
function countRefusal(store: SandboxStore, error: unknown): void {
  if (error instanceof SandboxError) {
    store.stats.refusals[error.errorcode] = (store.stats.refusals[error.errorcode] ?? 0) + 1;
  }
}

function serve(
  context: SandboxContext,
  drops: WeakSet<FastifyRequest>,
  handler: (params: RequestParams) => Outcome,
) {
  return async (
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply | undefined> => {
    const { store, faults } = context;
    const form = request.body instanceof Map ? (request.body as Map<string, string>) : undefined;
    const params = new RequestParams(request.query as Record<string, unknown>, form);
    let outcome: Outcome;
    try {
      context.auth.check(request.headers, params);
      outcome = handler(params);
    } catch (error) {
      countRefusal(store, error);
      throw error;
    }
    if (outcome.changed) await context.persistence?.commit();
    if (outcome.error) {
      countRefusal(store, outcome.error);
      throw outcome.error;
    }
    if (drops.has(request)) {
      // The ambiguous failure: the request was applied (and saved) but no answer ever comes.
      await faults.delay(request.method);
      store.stats.faults.dropped++;
      reply.hijack();
      request.raw.socket.destroy();
      return undefined;
    }
    reply.type('application/json; charset=utf-8');
    const records = outcome.records;
    return reply.send(
      Array.isArray(records)
        ? jsonArray(records, params.pretty)
        : jsonArrayStream(records, params.pretty),
    );
  };
}
