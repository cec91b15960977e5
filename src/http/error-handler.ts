/** Every error the API answers has the same body: { error: { code, message, details } }. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isPorterError, PorterError } from '../errors/porter-error.js';

/** @fastify/multipart's limits that are a wrong request, not a large one. */
const MULTIPART_LIMITS = new Set(['FST_FILES_LIMIT', 'FST_PARTS_LIMIT', 'FST_FIELDS_LIMIT']);

/** Any error as the PorterError the API answers with: its code, its message, never a stack. */
export function toPorterError(error: unknown): PorterError {
  if (isPorterError(error)) return error;
  const fastifyError = error as Partial<FastifyError> & { cause?: unknown };
  if (isPorterError(fastifyError.cause)) return fastifyError.cause;
  if (fastifyError.code === 'FST_REQ_FILE_TOO_LARGE' || fastifyError.statusCode === 413) {
    return new PorterError('PORTER_UPLOAD_TOO_LARGE', fastifyError.message ?? 'upload too large');
  }
  if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || fastifyError.statusCode === 415) {
    return new PorterError(
      'PORTER_UNSUPPORTED_MEDIA_TYPE',
      `${fastifyError.message ?? 'unsupported media type'}; send multipart/form-data, text/csv, application/json or application/x-ndjson`,
    );
  }
  if (MULTIPART_LIMITS.has(fastifyError.code ?? '')) {
    return new PorterError(
      'PORTER_USAGE',
      fastifyError.code === 'FST_FILES_LIMIT'
        ? 'send one file per upload'
        : `too many parts in the multipart upload (${fastifyError.message ?? 'limit reached'})`,
    );
  }
  if (fastifyError.validation || (fastifyError.statusCode && fastifyError.statusCode < 500)) {
    return new PorterError('PORTER_USAGE', fastifyError.message ?? 'bad request');
  }
  return new PorterError('PORTER_INTERNAL', 'internal error; see the API log', { cause: error });
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const porterError = toPorterError(error);
  if (porterError.code === 'PORTER_INTERNAL') request.log.error({ err: error }, 'request failed');
  void reply.status(porterError.httpStatus).send({ error: porterError.toJSON() });
}

/** An unknown route: the answer names the path, never the query (it may carry a secret). */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  const path = request.url.split('?')[0] ?? '';
  const error = new PorterError('PORTER_NOT_FOUND', `no route ${request.method} ${path}`);
  void reply.status(error.httpStatus).send({ error: error.toJSON() });
}
