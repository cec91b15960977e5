/**
 * The fields each route of the queue dashboard takes, so that it refuses any other as every
 * porter route does (strict-fields.ts). Its API routes take what their own request schemas
 * (valibot, in @bull-board/api) name; its pages take what its page script puts in their address
 * (`status`, `page`, and the schedulers page's `queueName`), and its static files the version
 * its script asks its translations with (`v`).
 */
import { appRoutes } from '@bull-board/api/dist/routes.js';
import { requestSchemas } from '@bull-board/api/dist/schemas/requests.js';
import { BOARD_PATH } from '../access.js';

export interface BoardRouteFields {
  query: string[];
  /** The body's fields; undefined leaves the route as every route is (no body field). */
  body?: string[];
}

/** What the dashboard's pages carry in their address. */
const PAGE_QUERY = ['status', 'page', 'queueName'];

/** The version the dashboard's script asks its translation files with. */
const STATIC_QUERY = ['v'];

interface SchemaShape {
  entries?: Record<string, unknown>;
  options?: unknown[];
}

/** The field names of a valibot object schema (through `partial`, `pipe` and `union`). */
function fieldNames(schema: unknown): string[] {
  const shape = schema as SchemaShape | undefined;
  if (shape?.entries) return Object.keys(shape.entries);
  if (Array.isArray(shape?.options)) return [...new Set(shape.options.flatMap(fieldNames))];
  return [];
}

const schemas = requestSchemas as unknown as Record<string, unknown>;

function namedFields(name: string | undefined): string[] | undefined {
  return name === undefined ? undefined : fieldNames(schemas[name]);
}

/** The fields of one of the dashboard's routes, or undefined for a route that is not one. */
export function boardRouteFields(
  method: string | string[],
  url: string | undefined,
): BoardRouteFields | undefined {
  if (url === undefined || !url.startsWith(`${BOARD_PATH}/`)) return undefined;
  const path = url.slice(BOARD_PATH.length);
  const methods = ([] as string[]).concat(method).map((name) => name.toLowerCase());
  for (const route of appRoutes.api) {
    const routeMethods = ([] as string[]).concat(route.method);
    const paths = ([] as string[]).concat(route.route);
    if (!paths.includes(path) || !routeMethods.some((name) => methods.includes(name))) continue;
    const spec = route.spec as { query?: string; body?: string };
    return { query: namedFields(spec.query) ?? [], body: namedFields(spec.body) };
  }
  const pages = ([] as string[]).concat(appRoutes.entryPoint.route);
  if (pages.includes(path) || pages.includes(path.replace(/\/$/, '') || '/')) {
    return { query: PAGE_QUERY };
  }
  if (path.endsWith('*')) return { query: STATIC_QUERY };
  return undefined;
}
