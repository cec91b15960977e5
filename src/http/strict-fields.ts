/**
 * What a request names is what its route takes. Every route's query string, and the body of
 * every route that takes no upload, is a JSON schema whose fields are listed and closed
 * (`additionalProperties: false`); fastify's ajv refuses a field the schema does not name,
 * never strips it (`removeAdditional: false`), so `?dryrun=true` is 400 `PORTER_USAGE` naming
 * `dryrun` and the field meant (`dryRun`) rather than a real import. A route whose body is an
 * upload (a file, a bundle, a multipart form: `config.upload`) checks its form fields itself
 * with `unknownField`. The rule is applied to each route as it is added (an `onRoute` hook), so
 * a route added later has it too; test/http/unknown-fields.test.ts walks every route.
 */
import type {
  FastifyInstance,
  FastifySchema,
  FastifySchemaValidationError,
  RouteOptions,
} from 'fastify';
import { PorterError } from '../errors/porter-error.js';
import { nearestName } from '../util/nearest-name.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The body is an upload read as a stream (a file, a bundle, a multipart form), not options:
     * no JSON schema applies to it, and the route checks its form fields. @defaultValue false
     */
    upload?: boolean;
    /**
     * The query is written by another system (an identity provider's redirect), not options:
     * it is handed whole to what reads it, which checks it. @defaultValue false
     */
    foreignQuery?: boolean;
  }
}

/** Options of the fastify instance: ajv refuses what a closed schema does not name. */
export const STRICT_AJV = { customOptions: { removeAdditional: false as const } };

/** The part of a request a schema error is about. */
type SchemaErrorDataVar = 'body' | 'headers' | 'params' | 'querystring';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Where a field was given, as its message says it. */
export type FieldPlace = 'query' | 'body' | 'form';

const PLACE_TEXT: Record<FieldPlace, string> = {
  query: 'query parameter',
  body: 'body field',
  form: 'form field',
};

/** 400 PORTER_USAGE naming a field the route does not take, and the one meant when close. */
export function unknownField(
  name: string,
  place: FieldPlace,
  known: readonly string[],
): PorterError {
  const meant = nearestName(name, known);
  const shown = JSON.stringify(name.slice(0, 100));
  const hint =
    meant !== undefined
      ? ` (did you mean ${meant}?)`
      : known.length > 0
        ? `; it takes ${[...known].sort().join(', ')}`
        : `; it takes no ${PLACE_TEXT[place]}s`;
  return new PorterError(
    'PORTER_USAGE',
    `unknown ${PLACE_TEXT[place]} ${shown}: nothing was done${hint}`,
    { details: { field: name.slice(0, 100), in: place, ...(meant ? { didYouMean: meant } : {}) } },
  );
}

/** Refuses the first of `fields` that is not one of `known`. */
export function checkFieldNames(
  fields: Record<string, unknown>,
  known: readonly string[],
  place: FieldPlace,
): void {
  const unknown = Object.keys(fields).find((name) => !known.includes(name));
  if (unknown !== undefined) throw unknownField(unknown, place, known);
}

interface ObjectSchema {
  type?: unknown;
  properties?: Record<string, unknown>;
  additionalProperties?: unknown;
  [keyword: string]: unknown;
}

function isObjectSchema(value: unknown): value is ObjectSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A closed schema of fields whose values what reads them checks (a zod schema, a library's own
 * validation); with `nullable`, a body that may be left out.
 */
export function fieldsSchema(
  names: readonly string[],
  options: { nullable?: boolean } = {},
): ObjectSchema {
  return {
    type: options.nullable ? ['object', 'null'] : 'object',
    properties: Object.fromEntries(names.map((name) => [name, {}])),
    additionalProperties: false,
  };
}

/** The part's schema with its fields listed and closed; a route with none takes no fields. */
function closed(part: unknown, where: string, nullable: boolean): ObjectSchema {
  if (part === undefined) {
    return {
      type: nullable ? ['object', 'null'] : 'object',
      properties: {},
      additionalProperties: false,
    };
  }
  if (!isObjectSchema(part) || part.content !== undefined) {
    throw new Error(`${where}: declare it as one object schema with its properties`);
  }
  return { ...part, properties: part.properties ?? {}, additionalProperties: false };
}

/** The names a part of the route's schema declares. */
function declared(schema: FastifySchema | undefined, dataVar: SchemaErrorDataVar): string[] {
  const part = (schema as Record<string, unknown> | undefined)?.[dataVar];
  return isObjectSchema(part) && isObjectSchema(part.properties)
    ? Object.keys(part.properties)
    : [];
}

/** fastify's own wording for every other error, as a PorterError naming the field. */
function validationError(
  errors: FastifySchemaValidationError[],
  dataVar: SchemaErrorDataVar,
  schema: FastifySchema | undefined,
): Error {
  const first = errors[0];
  if (first?.keyword === 'additionalProperties' && first.instancePath === '') {
    const name = String(first.params.additionalProperty ?? '');
    return unknownField(
      name,
      dataVar === 'querystring' ? 'query' : 'body',
      declared(schema, dataVar),
    );
  }
  const text = errors
    .map((error) => `${dataVar}${error.instancePath} ${error.message ?? 'is not valid'}`)
    .join(', ');
  const field =
    first?.instancePath.split('/')[1] ??
    (typeof first?.params.missingProperty === 'string' ? first.params.missingProperty : undefined);
  return new PorterError('PORTER_USAGE', text, field ? { details: { field } } : {});
}

/** Closes the route's query (and, unless it takes an upload, its body) as it is added. */
export function strictRoute(route: RouteOptions): void {
  const methods = ([] as string[]).concat(route.method);
  const where = `${methods.join(',')} ${route.url}`;
  const schema: FastifySchema = { ...route.schema };
  if (route.config?.foreignQuery !== true) {
    schema.querystring = closed(schema.querystring, `the query of ${where}`, false);
  }
  if (methods.some((method) => BODY_METHODS.has(method)) && route.config?.upload !== true) {
    schema.body = closed(schema.body, `the body of ${where}`, schema.body === undefined);
  }
  route.schema = schema;
  // read when a request is refused: hooks added after this one may still declare fields
  route.schemaErrorFormatter = (errors, dataVar) => validationError(errors, dataVar, route.schema);
}

/** Parsed fields (a query, a JSON or form body), not a stream or a list. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return typeof (value as { pipe?: unknown }).pipe !== 'function' && !Buffer.isBuffer(value);
}

/** Every route added from now on takes only the fields it declares. */
export function registerStrictFields(app: FastifyInstance): void {
  app.addHook('onRoute', strictRoute);
  app.addHook('preValidation', async (request) => {
    // no route: the answer is 404 whatever the request names
    if (request.routeOptions.url === undefined) return;
    const config = request.routeOptions.config;
    // a multipart body is an upload: a route that takes none would otherwise read nothing of it
    if (config?.upload !== true && request.isMultipart()) {
      throw new PorterError(
        'PORTER_UNSUPPORTED_MEDIA_TYPE',
        'this route takes no multipart form: send its options as query parameters or a JSON body',
      );
    }
    // an unknown field is named before ajv's other complaints: a required field said missing
    // is often the one misspelled
    const schema = request.routeOptions.schema as FastifySchema | undefined;
    if (config?.foreignQuery !== true && isPlainObject(request.query)) {
      checkFieldNames(request.query, declared(schema, 'querystring'), 'query');
    }
    if (config?.upload !== true && isPlainObject(request.body) && schema?.body !== undefined) {
      checkFieldNames(request.body, declared(schema, 'body'), 'body');
    }
  });
}
