/**
 * SCIM /Bulk (RFC 7644 §3.7): operations applied in order through the same use cases as single
 * requests; `bulkId:x` in a later operation's path or data names what an earlier POST created
 * (a group's member); `failOnErrors` stops after that many errors. Each operation's answer says
 * its own status.
 */
import { PorterError } from '../errors/porter-error.js';
import { isObject, type Json, type JsonObject } from '../scim/attribute-path.js';
import { BULK_MAX_OPERATIONS } from '../scim/discovery.js';
import { withSharedPatchWork } from '../scim/patch.js';
import { scimInvalid, type ScimErrorBody } from '../scim/scim-error.js';
import type { ScimTarget } from './scim.js';

export const BULK_REQUEST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
export const BULK_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:BulkResponse';

interface BulkAnswer {
  method: string;
  bulkId?: string;
  location?: string;
  version?: string;
  status: string;
  response?: unknown;
}

function field(item: JsonObject, name: string): Json | undefined {
  const key = Object.keys(item).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : item[key];
}

/** Replaces every `bulkId:x` text in the value by the id created for x. */
function resolveIds(value: Json, ids: ReadonlyMap<string, string>): Json {
  if (typeof value === 'string') {
    return value.replace(/bulkId:([A-Za-z0-9._~-]+)/g, (whole, bulkId: string) => {
      const id = ids.get(bulkId);
      if (id === undefined)
        throw scimInvalid('invalidValue', `${whole} names no earlier POST of this request`);
      return id;
    });
  }
  if (Array.isArray(value)) return value.map((item) => resolveIds(item, ids));
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveIds(v, ids)]));
  return value;
}

/** Runs a BulkRequest: its PATCH operations share one PATCH's work limit (src/scim/patch.ts). */
export function runBulk(
  service: ScimTarget,
  body: unknown,
  errorBody: (error: unknown) => ScimErrorBody,
): Promise<JsonObject> {
  return withSharedPatchWork(() => runOperations(service, body, errorBody));
}

async function runOperations(
  service: ScimTarget,
  body: unknown,
  errorBody: (error: unknown) => ScimErrorBody,
): Promise<JsonObject> {
  if (!isObject(body)) throw scimInvalid('invalidSyntax', 'the body must be a BulkRequest object');
  const operations = field(body, 'operations');
  if (!Array.isArray(operations))
    throw scimInvalid('invalidSyntax', 'a BulkRequest needs an "Operations" list');
  if (operations.length > BULK_MAX_OPERATIONS) {
    throw new PorterError(
      'PORTER_UPLOAD_TOO_LARGE',
      `a /Bulk request may carry at most ${BULK_MAX_OPERATIONS} operations (maxOperations of ServiceProviderConfig)`,
      { details: { scimType: 'tooMany' } },
    );
  }
  const failOn = field(body, 'failonerrors');
  const maxErrors = typeof failOn === 'number' && failOn > 0 ? failOn : Infinity;
  const ids = new Map<string, string>();
  const answers: BulkAnswer[] = [];
  let errors = 0;
  for (const raw of operations) {
    if (errors >= maxErrors) break;
    const operation = isObject(raw) ? raw : {};
    const method = String(field(operation, 'method') ?? '').toUpperCase();
    const bulkId =
      typeof field(operation, 'bulkid') === 'string'
        ? String(field(operation, 'bulkid'))
        : undefined;
    const answer: BulkAnswer = { method, ...(bulkId ? { bulkId } : {}), status: '200' };
    try {
      const path = String(resolveIds(String(field(operation, 'path') ?? ''), ids));
      const data = field(operation, 'data');
      const resolved = data === undefined ? undefined : resolveIds(data, ids);
      const match = /^\/(Users|Groups)(?:\/([^/]+))?$/i.exec(path);
      if (!match)
        throw scimInvalid('invalidPath', `path "${path}" is not /Users, /Groups or one of theirs`);
      const users = match[1]!.toLowerCase() === 'users';
      const id = match[2];
      const version = field(operation, 'version');
      const ifMatch = typeof version === 'string' ? version : undefined;
      if (method === 'POST' && id === undefined) {
        const written = users
          ? await service.createUser(resolved)
          : await service.createGroup(resolved);
        if (bulkId) ids.set(bulkId, String(written.resource.id));
        Object.assign(answer, {
          status: '201',
          location: written.location,
          version: written.version,
        });
      } else if (id !== undefined && (method === 'PUT' || method === 'PATCH')) {
        const written =
          method === 'PUT'
            ? users
              ? await service.replaceUser(id, resolved, ifMatch)
              : await service.replaceGroup(id, resolved, ifMatch)
            : users
              ? await service.patchUser(id, resolved, ifMatch)
              : await service.patchGroup(id, resolved, ifMatch);
        Object.assign(answer, {
          status: method === 'PUT' ? '200' : '204',
          location: written.location,
          version: written.version,
        });
      } else if (id !== undefined && method === 'DELETE') {
        if (users) await service.deleteUser(id, ifMatch);
        else await service.deleteGroup(id, ifMatch);
        answer.status = '204';
      } else {
        throw scimInvalid(
          'invalidSyntax',
          `${method || 'no method'} ${path} is not a bulk operation`,
        );
      }
    } catch (error) {
      errors++;
      const response = errorBody(error);
      Object.assign(answer, { status: response.status, response });
    }
    answers.push(answer);
  }
  return { schemas: [BULK_RESPONSE_SCHEMA], Operations: answers as unknown as Json };
}
