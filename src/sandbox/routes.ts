/**
 * The admin routes and the path every request takes through them:
 * rate limit → injected failure → auth → handler (plan, apply) → save → latency → answer,
 * or, for an injected drop, a destroyed connection instead of the answer.
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
  for (const resource of RESOURCE_NAMES) {
    const url = ADMIN_PATH_PREFIX + RESOURCES[resource].path;
    const writeMethods = WRITE_METHODS[resource];
    app.get(
      url,
      serve(context, (params) => ({
        records: READERS[resource](context.store, params),
        changed: false,
      })),
    );
    for (const method of writeMethods) {
      app.route({
        method,
        url,
        handler: serve(context, (params) => write(context, resource, method, params)),
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

/** Wraps a handler in the fault, auth, save and answer steps every admin request takes. */
function serve(context: SandboxContext, handler: (params: RequestParams) => Outcome) {
  return async (
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply | undefined> => {
    const { store, faults } = context;
    const method = request.method as keyof typeof store.stats.requests;
    if (method in store.stats.requests) store.stats.requests[method]++;
    const form = request.body instanceof Map ? (request.body as Map<string, string>) : undefined;
    const params = new RequestParams(request.query as Record<string, unknown>, form);
    let outcome: Outcome | undefined;
    let failure: unknown;
    let drop = false;
    try {
      drop = faults.admit().drop;
      context.auth.check(request.headers, params);
      outcome = handler(params);
      if (outcome.changed) await context.persistence?.commit();
    } catch (error) {
      failure = error;
    }
    await faults.delay();
    if (drop) {
      // The ambiguous failure: the request was applied (and saved) but no answer ever comes.
      store.stats.faults.dropped++;
      reply.hijack();
      request.raw.socket.destroy();
      return undefined;
    }
    if (failure !== undefined) throw failure;
    if (!outcome) throw new Error('handler produced no outcome');
    if (outcome.error) throw outcome.error;
    reply.type('application/json; charset=utf-8');
    const records = outcome.records;
    return reply.send(
      Array.isArray(records)
        ? jsonArray(records, params.pretty)
        : jsonArrayStream(records, params.pretty),
    );
  };
}
