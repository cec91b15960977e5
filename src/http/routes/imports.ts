/** /v1/imports: upload, state, streamed results, cancel. */
import { visibleOptions } from '../../auth/mapping-visibility.js';
import { visibleTargets } from '../../auth/target-limits.js';
import type {} from '@fastify/swagger';
import { PassThrough, pipeline, Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  cancelImport,
  describeImport,
  requireImport,
  resumeImport,
  retryImport,
  selectForRetry,
  startImport,
  writeReport,
} from '../../app/imports.js';
import type { PorterContext } from '../../app/context.js';
import { PorterError } from '../../errors/porter-error.js';
import type { ImportInfo } from '../../model/import.js';
import { IMPORT_FIELD_NAMES, parseImportFields } from '../import-request.js';
import { checkFieldNames, fieldsSchema } from '../strict-fields.js';
import { fileThenNothing, mergeFields, readUploadForm } from '../upload-form.js';
import { limitBytes, uploadTooLarge } from '../size-limit.js';
import { idParams } from '../schemas.js';
import { parseStatuses } from '../status-filter.js';

export interface ImportRoutesOptions {
  context: PorterContext;
  maxUploadBytes: number;
}

/** Room for a multipart body's option fields (the mapping among them) and boundaries. */
const MULTIPART_ENVELOPE_BYTES = 1024 * 1024;

const RAW_TYPES = ['text/csv', 'application/json', 'application/x-ndjson', 'text/plain'];

export const importSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    state: { type: 'string' },
    reason: { type: 'string' },
    reasonCode: {
      type: 'string',
      description:
        'the error code of why it failed, when one code says it (PORTER_TARGET_UNREACHABLE: nothing could be sent)',
    },
    total: { type: 'integer' },
    done: { type: 'integer' },
    batches: { type: 'integer' },
    counts: { type: 'object', additionalProperties: { type: 'integer' } },
    options: { type: 'object', additionalProperties: true },
    source: { type: 'string' },
    retryOf: { type: 'string' },
    applyOf: { type: 'string' },
    undoOf: { type: 'string' },
    startedBy: {
      type: 'string',
      description: 'the principal, schedule (`schedule:<name>`) or watched folder that started it',
    },
    onBehalfOf: {
      type: 'string',
      description: 'who added the schedule or started the watch that started it',
    },
    actionId: { type: 'string', description: 'the audit trail action that created it' },
    approval: { type: 'object', additionalProperties: true },
    actions: { type: 'object', additionalProperties: { type: 'integer' } },
    lookup: { type: 'object', additionalProperties: true },
    sync: { type: 'object', additionalProperties: true },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    receivedAt: {
      type: 'string',
      description: 'when the whole upload was read, and its records staged or reported',
    },
    finishedAt: { type: 'string' },
    settled: {
      type: 'boolean',
      description: 'final, and every record has its result: the report is complete',
    },
    columns: { type: 'array', items: { type: 'string' } },
    moreColumns: {
      type: 'array',
      items: { type: 'string' },
      description: 'JSON and NDJSON: keys of later records that the first record lacks',
    },
    problems: {
      type: 'array',
      description:
        'why records did not succeed: per status (failed, unprocessed) and error code, how many and the first message',
      items: {
        type: 'object',
        properties: {
          status: { type: 'string' },
          code: { type: 'string' },
          count: { type: 'integer' },
          message: { type: 'string' },
        },
      },
    },
    pausedBecause: {
      type: 'string',
      description: 'the last reason the import was paused (the circuit breaker), kept after',
    },
    approvedAt: { type: 'string', description: 'a held sync: when it was approved' },
    writtenBy: {
      type: 'string',
      description:
        'an approved held sync: the import that wrote its plan (undo and retry go there)',
    },
    undoneBy: { type: 'string', description: 'the import that undid this one (the latest)' },
    links: { type: 'object', additionalProperties: { type: 'string' } },
    progress: {
      type: 'object',
      properties: {
        percent: { type: 'number' },
        ratePerSecond: { type: 'number' },
        etaSeconds: { type: 'number' },
      },
    },
    calls: {
      type: 'object',
      properties: {
        writeCalls: { type: 'integer' },
        lookupReads: { type: 'integer' },
        reconcileReads: { type: 'integer' },
      },
    },
  },
} as const;

const leftOutSchema = {
  type: 'object',
  description: 'failed records left out because a retry cannot mend them, by error code',
  properties: {
    total: { type: 'integer' },
    byCode: { type: 'object', additionalProperties: { type: 'integer' } },
  },
} as const;

const retrySelectionSchema = {
  type: 'object',
  properties: { retryable: { type: 'integer' }, leftOut: leftOutSchema },
} as const;

/** The import as the caller may read it (see mapping-visibility.ts), with its links. */
export function withLinks(info: ImportInfo): ImportInfo & { links: Record<string, string> } {
  const self = `/v1/imports/${encodeURIComponent(info.id)}`;
  return {
    ...info,
    options: visibleOptions(info.options),
    links: {
      self,
      results: `${self}/results`,
      failed: `${self}/results?status=failed,unprocessed`,
    },
  };
}

export async function importRoutes(
  app: FastifyInstance,
  options: ImportRoutesOptions,
): Promise<void> {
  const { context } = options;
  await app.register(uploadRoute, options);

  app.get<{ Querystring: { limit?: number; cursor?: string; source?: string; target?: string } }>(
    '/v1/imports',
    {
      schema: {
        summary: 'List recent imports, newest first, a page at a time',
        description:
          'When more imports follow, the `x-next-cursor` header holds the cursor of the next ' +
          'page and the `link` header its URL (rel="next").',
        querystring: {
          type: 'object',
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
            cursor: { type: 'string', maxLength: 200 },
            source: {
              type: 'string',
              maxLength: 500,
              description:
                'Only imports from this source: `scim` (what SCIM changed, its held plans), a directory source, a file name.',
            },
            target: {
              type: 'string',
              maxLength: 200,
              description: 'Only imports of this target (`default` for those that name none).',
            },
          },
        },
        response: { 200: { type: 'array', items: importSchema } },
      },
    },
    async (request, reply) => {
      const limit = request.query.limit ?? 100;
      const { cursor, source, target } = request.query;
      const page = await context.store.listPage({ limit, cursor, source, target });
      if (page.next) {
        const from =
          (source === undefined ? '' : `&source=${encodeURIComponent(source)}`) +
          (target === undefined ? '' : `&target=${encodeURIComponent(target)}`);
        const next = `/v1/imports?limit=${limit}${from}&cursor=${encodeURIComponent(page.next)}`;
        void reply.header('x-next-cursor', page.next).header('link', `<${next}>; rel="next"`);
      }
      // a target-limited token sees its targets' imports only
      return visibleTargets(page.imports, (info) => info.options.target).map(withLinks);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/imports/:id',
    {
      schema: {
        summary: 'State, counts and progress of an import',
        params: idParams,
        response: { 200: importSchema },
      },
    },
    async (request) => withLinks(await describeImport(context, request.params.id)),
  );

  app.get<{ Params: { id: string }; Querystring: { format?: string; status?: string } }>(
    '/v1/imports/:id/results',
    {
      schema: {
        summary: 'Per-record results in input order, streamed',
        params: idParams,
        querystring: {
          type: 'object',
          properties: {
            format: { type: 'string', enum: ['csv', 'json'], default: 'csv' },
            status: {
              type: 'string',
              description: 'comma-separated: succeeded, failed, skipped, unprocessed',
            },
          },
        },
      },
    },
    async (request, reply) => {
      const format = request.query.format === 'json' ? 'json' : 'csv';
      const status = parseStatuses(request.query.status);
      await requireImport(context, request.params.id);
      const body = new PassThrough();
      void reply
        .header('content-type', format === 'json' ? 'application/json' : 'text/csv; charset=utf-8')
        .header(
          'content-disposition',
          `attachment; filename="${request.params.id}-results.${format}"`,
        )
        .send(body);
      writeReport(context, request.params.id, body, { format, status }).then(
        () => body.end(),
        (error: unknown) => body.destroy(error as Error),
      );
      return reply;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/imports/:id',
    {
      schema: {
        summary: 'Cancel an import: batches not yet sent are never sent',
        params: idParams,
        response: { 200: importSchema },
      },
    },
    async (request) => {
      return withLinks(await cancelImport(context, request.params.id));
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/imports/:id/resume',
    {
      schema: {
        summary: 'Resume a paused import now',
        params: idParams,
        response: { 200: importSchema },
      },
    },
    async (request) => withLinks(await resumeImport(context, request.params.id)),
  );

  app.get<{ Params: { id: string }; Querystring: { status?: string } }>(
    '/v1/imports/:id/retry',
    {
      schema: {
        summary:
          'What a retry would send (unprocessed records and failures a retry can mend) and what it would leave out, by error code',
        params: idParams,
        querystring: { type: 'object', properties: { status: { type: 'string' } } },
        response: { 200: retrySelectionSchema },
      },
    },
    async (request) => {
      const statuses = parseStatuses(request.query.status) ?? ['failed', 'unprocessed'];
      return selectForRetry(context, request.params.id, statuses);
    },
  );

  app.post<{ Params: { id: string }; Querystring: { status?: string } }>(
    '/v1/imports/:id/retry',
    {
      schema: {
        summary:
          'Start a new import of the records that did not succeed and that a retry can mend (default status: failed,unprocessed); `leftOut` counts the others by error code',
        params: idParams,
        querystring: { type: 'object', properties: { status: { type: 'string' } } },
        response: {
          202: {
            ...importSchema,
            properties: { ...importSchema.properties, leftOut: leftOutSchema },
          },
        },
      },
    },
    async (request, reply) => {
      const statuses = parseStatuses(request.query.status) ?? ['failed', 'unprocessed'];
      const started = await retryImport(context, request.params.id, statuses);
      return reply.status(202).send({ ...withLinks(started.import), leftOut: started.leftOut });
    },
  );
}

/** POST /v1/imports, with the content type parsers of an upload. */
async function uploadRoute(app: FastifyInstance, options: ImportRoutesOptions): Promise<void> {
  const { context, maxUploadBytes } = options;
  // uploads are streamed into the import, never parsed into memory by fastify; the parsers are
  // this plugin's own, so the other import routes still read a JSON body as options
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(RAW_TYPES, (_request, payload, done) => done(null, payload));

  app.post(
    '/v1/imports',
    {
      config: { upload: true },
      schema: {
        summary: 'Upload a CSV, JSON or NDJSON file and queue it as an import',
        description:
          'multipart/form-data with option fields (resource, mode, batchSize, listSeparator, delimiter, encoding, ' +
          'emptyAsClear, allowAdmin, allowLookalike, maxFailures, format, mapping, lookup, dryRun, stream; for mode sync also ' +
          'missing, maxDeletes, protect, scopeGroup, scopeMatch) placed before the ' +
          'file part (one file part only; a field after it is refused); or a raw ' +
          'text/csv, application/json or application/x-ndjson body with the options as query parameters. ' +
          'A field it does not take is refused (400 PORTER_USAGE naming it).',
        consumes: ['multipart/form-data', ...RAW_TYPES],
        querystring: fieldsSchema(IMPORT_FIELD_NAMES),
        response: { 202: importSchema },
      },
    },
    async (request, reply) => {
      // early refusal on the declared length; a multipart body also carries option fields and
      // boundaries, so it gets room for them; the file itself is counted exactly as it streams
      const declared = Number(request.headers['content-length'] ?? 0);
      const envelope = request.isMultipart() ? MULTIPART_ENVELOPE_BYTES : 0;
      if (declared > maxUploadBytes + envelope) throw uploadTooLarge(maxUploadBytes);
      const upload = request.isMultipart()
        ? await multipartUpload(request, maxUploadBytes)
        : rawUpload(request, maxUploadBytes);
      const info = await startImport(context, {
        ...parseImportFields(upload.fields),
        source: upload.stream,
        fileName: upload.fileName,
        contentType: upload.contentType,
      });
      return reply.status(202).send(withLinks(info));
    },
  );
}

interface Upload {
  stream: Readable;
  fields: Record<string, unknown>;
  fileName?: string;
  contentType?: string;
}

function rawUpload(request: FastifyRequest, limit: number): Upload {
  const body = request.body as Readable | undefined;
  if (!body || typeof body.pipe !== 'function') {
    throw new PorterError(
      'PORTER_INPUT_EMPTY',
      'send the file as the request body or as a multipart file part',
    );
  }
  const contentType = String(request.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim();
  return {
    stream: pipeline(body, limitBytes(limit), () => {}),
    fields: { ...(request.query as Record<string, unknown>) },
    contentType,
  };
}

async function multipartUpload(request: FastifyRequest, limit: number): Promise<Upload> {
  const form = await readUploadForm(request, { fileSize: limit + 1 });
  checkFieldNames(form.fields, IMPORT_FIELD_NAMES, 'form');
  const file = pipeline(form.file.file, limitBytes(limit), () => {});
  return {
    stream: Readable.from(fileThenNothing(file, form.rest), { objectMode: false }),
    fields: mergeFields(request.query as Record<string, unknown>, form.fields),
    fileName: form.file.filename,
    contentType: form.file.mimetype,
  };
}
