/**
 * SCIM 2.0 at /scim/v2/{target}/ (docs/scim.md): Users, Groups, ServiceProviderConfig,
 * ResourceTypes, Schemas and Bulk, over the use cases of src/app/scim.ts. Bodies are SCIM
 * documents (`application/scim+json` or `application/json`), checked by src/scim/, not by route
 * schemas; the query is the identity provider's (Entra adds its own flags to it). Errors are
 * SCIM error bodies with their scimType; a target that is down or busy is answered 503 with
 * Retry-After, never left hanging.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AdminClient } from '../../admin/client.js';
import { AdminError } from '../../admin/errors.js';
import type { PorterContext } from '../../app/context.js';
import { closeScim, ScimTarget, type ScimQuery, type ScimWritten } from '../../app/scim.js';
import { ERROR_CODES } from '../../errors/codes.js';
import { PorterError } from '../../errors/porter-error.js';
import type { JsonObject } from '../../scim/attribute-path.js';
import { runBulk } from '../../app/scim-bulk.js';
import { refuseWhilePaused } from '../../app/scim-pause.js';
import {
  BULK_MAX_PAYLOAD_BYTES,
  resourceTypes,
  schemas,
  serviceProviderConfig,
} from '../../scim/discovery.js';
import { MAX_SCIM_DEPTH, nestsDeeperThan } from '../../scim/json-depth.js';
import { readPaging } from '../../scim/list-response.js';
import { scimErrorBody, scimInvalid } from '../../scim/scim-error.js';
import { toPorterError } from '../error-handler.js';

export interface ScimRoutesOptions {
  context: PorterContext;
}

export const SCIM_PREFIX = '/scim/v2/:target';
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';
/** Seconds an identity provider is told to wait when the target is down or busy. */
export const SCIM_RETRY_AFTER_SECONDS = 30;
/**
 * Largest SCIM body, any request's (a 5,000-member PATCH is about 300 KB): the maxPayloadSize
 * ServiceProviderConfig states for /Bulk.
 */
const SCIM_BODY_LIMIT = BULK_MAX_PAYLOAD_BYTES;

type Params = { target: string; id?: string };

const ENDPOINTS = [
  'Users',
  'Groups',
  'ServiceProviderConfig',
  'serviceConfiguration',
  'ResourceTypes',
  'Schemas',
  'Bulk',
];
const ENDPOINT_BY_LOWER = new Map(ENDPOINTS.map((name) => [name.toLowerCase(), name]));

/**
 * A SCIM URL with its endpoint spelt as porter's routes spell it: clients write `/users` and
 * `/Users/?filter=…` (Microsoft's collection does both). Every other URL is left as it is.
 */
export function canonicalScimUrl(url: string): string {
  const match = /^(\/scim\/v2\/[^/?]+\/)([^/?]+)(\/?)(\?.*|\/.*)?$/.exec(url);
  if (!match) return url;
  const endpoint = ENDPOINT_BY_LOWER.get(match[2]!.toLowerCase());
  if (endpoint === undefined) return url;
  const rest = match[4] ?? '';
  // a trailing slash before the query is the list itself
  return `${match[1]}${endpoint}${rest.startsWith('?') || rest === '' ? '' : match[3]}${rest}`;
}
type Query = Record<string, string | undefined>;

/** The SCIM answer of an error; a target that is down or busy is 503 with Retry-After. */
export function sendScimError(reply: FastifyReply, error: unknown): FastifyReply {
  let porter = tooLargeBody(error) ?? toPorterError(error);
  if (porter instanceof AdminError) {
    if (ERROR_CODES[porter.code].kind !== 'permanent') {
      const seconds = Math.max(
        1,
        Math.ceil((porter.retryAfterMs ?? SCIM_RETRY_AFTER_SECONDS * 1000) / 1000),
      );
      void reply.header('retry-after', String(seconds));
      porter = new PorterError(
        porter.code,
        `the DAM of this target did not answer in time (${porter.message}); try again later`,
      );
      return reply
        .status(503)
        .type(SCIM_CONTENT_TYPE)
        .send({ ...scimErrorBody(porter), status: '503' });
    }
  }
  if (porter.httpStatus === 429 || porter.httpStatus === 503) {
    const given = porter.details.retryAfterSeconds;
    void reply.header(
      'retry-after',
      String(typeof given === 'number' ? given : SCIM_RETRY_AFTER_SECONDS),
    );
  }
  return reply.status(porter.httpStatus).type(SCIM_CONTENT_TYPE).send(scimErrorBody(porter));
}

/** A body over the limit, told as RFC 7644 §3.7.4 asks: 413, naming maxPayloadSize. */
function tooLargeBody(error: unknown): PorterError | undefined {
  if ((error as { code?: unknown } | undefined)?.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return;
  return new PorterError(
    'PORTER_UPLOAD_TOO_LARGE',
    `the body is larger than the maxPayloadSize (${SCIM_BODY_LIMIT} bytes) of ServiceProviderConfig; send fewer operations per request`,
    { details: { scimType: 'tooMany' } },
  );
}

function queryOf(query: Query): ScimQuery {
  const value = (name: string): string | undefined => {
    const key = Object.keys(query).find((k) => k.toLowerCase() === name.toLowerCase());
    return key === undefined ? undefined : query[key];
  };
  return {
    filter: value('filter'),
    attributes: value('attributes'),
    excludedAttributes: value('excludedAttributes'),
    paging: readPaging(value('startIndex'), value('count')),
  };
}

function projectionOf(query: Query): Pick<ScimQuery, 'attributes' | 'excludedAttributes'> {
  const { attributes, excludedAttributes } = queryOf(query);
  return { attributes, excludedAttributes };
}

export async function scimRoutes(app: FastifyInstance, options: ScimRoutesOptions): Promise<void> {
  const { context } = options;
  const clients = new Map<string, AdminClient>();

  app.addHook('onClose', async () => {
    await Promise.all([...clients.values()].map((client) => client.close()));
    await closeScim(context);
  });

  await app.register(async (scim) => {
    scim.addContentTypeParser(
      ['application/scim+json', 'application/json'],
      { parseAs: 'string', bodyLimit: SCIM_BODY_LIMIT },
      (_request, text, done) => {
        const body = String(text);
        if (body.trim() === '') return done(null, undefined);
        // bounded before parsing: later steps (Bulk's bulkId references) walk it recursively
        if (nestsDeeperThan(body, MAX_SCIM_DEPTH)) {
          return done(
            scimInvalid('invalidSyntax', `the body nests deeper than ${MAX_SCIM_DEPTH} levels`),
            undefined,
          );
        }
        try {
          done(null, JSON.parse(body));
        } catch {
          done(scimInvalid('invalidSyntax', 'the body is not JSON'), undefined);
        }
      },
    );
    scim.setErrorHandler((error, _request, reply) => sendScimError(reply, error));
    // a request is refused at once while the target's calls are paused (src/app/scim-pause.ts)
    scim.addHook('preHandler', async (request) => {
      // discovery answers without the DAM; Users, Groups and Bulk call it
      if (!/\/(Users|Groups|Bulk)(\/|$)/.test(request.routeOptions.url ?? '')) return;
      const { target } = (request.params ?? {}) as Partial<Params>;
      if (target !== undefined) await refuseWhilePaused(context, target);
    });

    function serviceOf(request: FastifyRequest): ScimTarget {
      const { target } = request.params as Params;
      const resolved = context.targets.require(target);
      let client = clients.get(resolved.name);
      if (!client) {
        client = context.createAdminClient(16, resolved);
        clients.set(resolved.name, client);
      }
      const base = `${request.protocol}://${request.host}/scim/v2/${encodeURIComponent(target)}`;
      return new ScimTarget(context, resolved.name, client, base);
    }

    function baseOf(request: FastifyRequest): string {
      const { target } = request.params as Params;
      context.targets.require(target);
      return `${request.protocol}://${request.host}/scim/v2/${encodeURIComponent(target)}`;
    }

    const config = { foreignQuery: true, upload: true } as const;
    const hide = { hide: true };
    // every content type is held to the SCIM limit, not only those SCIM's parser reads
    const routeOptions = { config, schema: hide, bodyLimit: SCIM_BODY_LIMIT };

    const sendWritten = (reply: FastifyReply, written: ScimWritten, status: number): FastifyReply =>
      reply
        .status(status)
        .header('etag', written.version)
        .header('location', written.location)
        .type(SCIM_CONTENT_TYPE)
        .send(written.resource);

    const ifMatch = (request: FastifyRequest): string | undefined => {
      const header = request.headers['if-match'];
      return Array.isArray(header) ? header.join(',') : header;
    };

    const send = (reply: FastifyReply, body: unknown): FastifyReply =>
      reply.type(SCIM_CONTENT_TYPE).send(body);

    for (const [path, kind] of [
      ['Users', 'User'],
      ['Groups', 'Group'],
    ] as const) {
      scim.get<{ Params: Params; Querystring: Query }>(
        `${SCIM_PREFIX}/${path}`,
        routeOptions,
        async (request, reply) => {
          const service = serviceOf(request);
          const query = queryOf(request.query);
          return send(
            reply,
            kind === 'User' ? await service.listUsers(query) : await service.listGroups(query),
          );
        },
      );
      scim.get<{ Params: Params; Querystring: Query }>(
        `${SCIM_PREFIX}/${path}/:id`,
        routeOptions,
        async (request, reply) => {
          const service = serviceOf(request);
          const projection = projectionOf(request.query);
          const id = request.params.id!;
          const resource: JsonObject =
            kind === 'User'
              ? await service.getUser(id, projection)
              : await service.getGroup(id, projection);
          const version = (resource.meta as JsonObject | undefined)?.version;
          if (typeof version === 'string') void reply.header('etag', version);
          return send(reply, resource);
        },
      );
      scim.post<{ Params: Params; Body: unknown }>(
        `${SCIM_PREFIX}/${path}`,
        routeOptions,
        async (request, reply) => {
          const service = serviceOf(request);
          const written =
            kind === 'User'
              ? await service.createUser(request.body)
              : await service.createGroup(request.body);
          return sendWritten(reply, written, 201);
        },
      );
      scim.put<{ Params: Params; Body: unknown }>(
        `${SCIM_PREFIX}/${path}/:id`,
        routeOptions,
        async (request, reply) => {
          const service = serviceOf(request);
          const id = request.params.id!;
          const written =
            kind === 'User'
              ? await service.replaceUser(id, request.body, ifMatch(request))
              : await service.replaceGroup(id, request.body, ifMatch(request));
          return sendWritten(reply, written, 200);
        },
      );
      scim.patch<{ Params: Params; Body: unknown }>(
        `${SCIM_PREFIX}/${path}/:id`,
        routeOptions,
        async (request, reply) => {
          const service = serviceOf(request);
          const id = request.params.id!;
          const written =
            kind === 'User'
              ? await service.patchUser(id, request.body, ifMatch(request))
              : await service.patchGroup(id, request.body, ifMatch(request));
          return reply.status(204).header('etag', written.version).send();
        },
      );
      scim.delete<{ Params: Params }>(
        `${SCIM_PREFIX}/${path}/:id`,
        routeOptions,
        async (request, reply) => {
          const service = serviceOf(request);
          const id = request.params.id!;
          if (kind === 'User') await service.deleteUser(id, ifMatch(request));
          else await service.deleteGroup(id, ifMatch(request));
          return reply.status(204).send();
        },
      );
    }

    // Microsoft's reference collection asks /serviceConfiguration
    for (const name of ['ServiceProviderConfig', 'serviceConfiguration']) {
      scim.get<{ Params: Params }>(`${SCIM_PREFIX}/${name}`, routeOptions, async (request, reply) =>
        send(reply, serviceProviderConfig(baseOf(request))),
      );
    }
    // discovery: the list, and one by its id (in any case)
    const discovery = [
      { path: 'ResourceTypes', what: 'resource type', list: resourceTypes },
      { path: 'Schemas', what: 'schema', list: schemas },
    ] as const;
    for (const { path, what, list } of discovery) {
      scim.get<{ Params: Params }>(
        `${SCIM_PREFIX}/${path}`,
        routeOptions,
        async (request, reply) => {
          const all = list(baseOf(request));
          return send(reply, {
            schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
            totalResults: all.length,
            startIndex: 1,
            itemsPerPage: all.length,
            Resources: all,
          });
        },
      );
      scim.get<{ Params: Params }>(
        `${SCIM_PREFIX}/${path}/:id`,
        routeOptions,
        async (request, reply) => {
          const found = list(baseOf(request)).find(
            (item) => String(item.id).toLowerCase() === request.params.id!.toLowerCase(),
          );
          if (!found)
            throw new PorterError('PORTER_NOT_FOUND', `no ${what} "${request.params.id}"`);
          return send(reply, found);
        },
      );
    }
    scim.post<{ Params: Params; Body: unknown }>(
      `${SCIM_PREFIX}/Bulk`,
      routeOptions,
      async (request, reply) =>
        send(
          reply,
          await runBulk(serviceOf(request), request.body, (error) =>
            scimErrorBody(toPorterError(error)),
          ),
        ),
    );
  });
}
