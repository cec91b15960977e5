/**
 * What the API's log may say about a request: a URL keeps its path and the values of the known
 * option parameters, and every other query value is replaced, so a token or password sent as
 * `?token=…` never reaches the log. Applied to the request serializer, to error messages and
 * stacks, and to every message text.
 */
import type { FastifyRequest } from 'fastify';
import { pino, type LoggerOptions } from 'pino';

/** Query parameters whose values are options, safe to log. */
export const SAFE_QUERY_KEYS: ReadonlySet<string> = new Set([
  'target',
  'resource',
  'mode',
  'batchSize',
  'listSeparator',
  'delimiter',
  'encoding',
  'emptyAsClear',
  'allowAdmin',
  'allowLookalike',
  'maxFailures',
  'format',
  'stream',
  'status',
]);

export const REDACTED = '[redacted]';

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** A query string (without `?`) with every value but those of safe keys replaced. */
export function redactQueryString(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals < 0) return pair;
      const key = pair.slice(0, equals);
      return SAFE_QUERY_KEYS.has(decoded(key)) ? pair : `${key}=${REDACTED}`;
    })
    .join('&');
}

/** A URL (or path) with its query values redacted. */
export function redactUrl(url: string): string {
  const mark = url.indexOf('?');
  return mark < 0 ? url : `${url.slice(0, mark + 1)}${redactQueryString(url.slice(mark + 1))}`;
}

const QUERY_IN_TEXT = /\?([^\s"'`<>]+)/g;

/** Any text with the query strings in it redacted (an error message naming a URL). */
export function redactUrlsInText(text: string): string {
  return text.replace(QUERY_IN_TEXT, (_match, query: string) => `?${redactQueryString(query)}`);
}

type SerializedError = ReturnType<typeof pino.stdSerializers.err>;

function redactError(error: Error): SerializedError {
  const serialized = pino.stdSerializers.err(error);
  if (typeof serialized.message === 'string')
    serialized.message = redactUrlsInText(serialized.message);
  if (typeof serialized.stack === 'string') serialized.stack = redactUrlsInText(serialized.stack);
  return serialized;
}

/** The pino options that keep query values out of the API's log. */
export function redactingLogOptions(): Pick<LoggerOptions, 'serializers' | 'hooks'> {
  return {
    serializers: {
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: redactUrl(request.url),
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket?.remotePort,
      }),
      err: redactError,
    },
    hooks: {
      // message texts too: a log line may name a URL ("Reply was already sent … /x?token=…")
      logMethod(args, method) {
        const redacted = args.map((arg: unknown) =>
          typeof arg === 'string' ? redactUrlsInText(arg) : arg,
        );
        method.apply(this, redacted as Parameters<typeof method>);
      },
    },
  };
}
