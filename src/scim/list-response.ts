/**
 * ListResponse paging (RFC 7644 §3.4.2.4): `startIndex` is 1-based (less than 1 is read as 1),
 * `count` is how many at most (negative is read as 0; none: every one up to the server's
 * maximum); `totalResults` counts every match, not the page.
 */
import type { JsonObject } from './attribute-path.js';
import { scimInvalid } from './scim-error.js';

export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

/** Most resources one page holds, whatever `count` asks (ServiceProviderConfig says so too). */
export const MAX_PAGE_SIZE = 1000;

export interface Paging {
  startIndex: number;
  count: number;
}

function integer(name: string, text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^\s*-?\d{1,15}\s*$/.test(text))
    throw scimInvalid('invalidValue', `${name} must be an integer, not "${text}"`);
  return Number(text);
}

/** The paging a request's `startIndex` and `count` ask for. */
export function readPaging(startIndex?: string, count?: string): Paging {
  const start = integer('startIndex', startIndex) ?? 1;
  const size = integer('count', count) ?? MAX_PAGE_SIZE;
  return { startIndex: Math.max(1, start), count: Math.min(Math.max(0, size), MAX_PAGE_SIZE) };
}

export interface ListResponse {
  schemas: [typeof LIST_SCHEMA];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: JsonObject[];
}

/** The page of `all` that the paging asks for. */
export function listResponse(all: readonly JsonObject[], paging: Paging): ListResponse {
  const page = all.slice(paging.startIndex - 1, paging.startIndex - 1 + paging.count);
  return {
    schemas: [LIST_SCHEMA],
    totalResults: all.length,
    startIndex: paging.startIndex,
    itemsPerPage: page.length,
    Resources: page,
  };
}
