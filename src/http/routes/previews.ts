/** /v1/previews: the columns and first records of an upload, read from its head, nothing queued. */
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PorterError } from '../../errors/porter-error.js';
import { previewUpload, PREVIEW_MAX_RECORDS } from '../../ingest/preview.js';
import type { PorterContext } from '../../app/context.js';
import { readDirectory } from '../../app/imports.js';
import { parseImportFields } from '../import-request.js';

export interface PreviewRoutesOptions {
  context: PorterContext;
}

/** Bytes of the upload a preview reads at most; the rest of the body is discarded unread. */
export const PREVIEW_HEAD_BYTES = 256 * 1024;

/** The option fields and file head of a multipart body, with the boundaries around them. */
const PREVIEW_BODY_BYTES = PREVIEW_HEAD_BYTES + 1024 * 1024;

interface PreviewHead {
  bytes: Uint8Array;
  /** Whether the file went on past the bytes read. */
  partial: boolean;
  fields: Record<string, unknown>;
  fileName?: string;
  contentType?: string;
}

export async function previewRoutes(
  app: FastifyInstance,
  options: PreviewRoutesOptions,
): Promise<void> {
  const { context } = options;

  app.post(
    '/v1/previews',
    {
      schema: {
        summary:
          'Preview an upload: its columns, their fields and its first records, nothing queued',
        description:
          'multipart/form-data with the same option fields as POST /v1/imports (resource, mode, ' +
          'delimiter, listSeparator, emptyAsClear, format, mapping) before the file part, plus ' +
          `limit (records shown, at most ${PREVIEW_MAX_RECORDS}). Only the first ` +
          `${PREVIEW_HEAD_BYTES / 1024} KiB of the file are read: send its head, not all of it.`,
        consumes: ['multipart/form-data'],
      },
    },
    async (request) => {
      const declared = Number(request.headers['content-length'] ?? 0);
      if (declared > PREVIEW_BODY_BYTES) {
        throw new PorterError(
          'PORTER_UPLOAD_TOO_LARGE',
          `a preview reads only the first ${PREVIEW_HEAD_BYTES / 1024} KiB of a file; send that head, not the whole file`,
        );
      }
      if (!request.isMultipart()) {
        throw new PorterError(
          'PORTER_UNSUPPORTED_MEDIA_TYPE',
          'send the preview as multipart/form-data: option fields, then the file part',
        );
      }
      const head = await readHead(request);
      const parsed = parseImportFields(head.fields);
      const limit = head.fields.limit === undefined ? undefined : Number(head.fields.limit);
      if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
        throw new PorterError('PORTER_USAGE', 'limit: a positive whole number of records', {
          details: { field: 'limit' },
        });
      }
      return previewUpload(head.bytes, {
        resource: parsed.options.resource,
        mode: parsed.options.mode,
        format: parsed.format,
        fileName: head.fileName,
        contentType: head.contentType,
        delimiter: parsed.options.delimiter,
        listSeparator: parsed.options.listSeparator,
        emptyAsClear: parsed.options.emptyAsClear,
        mapping: parsed.mapping,
        maxRecordBytes: context.env.PORTER_MAX_RECORD_BYTES,
        // read only when the mapping calls $unique, so the preview gives the names the import would
        directory: () => readDirectory(context, parsed.options.resource, parsed.options.target),
        limit,
        partial: head.partial,
      });
    },
  );
}

/** Reads the option fields and at most PREVIEW_HEAD_BYTES of the file part. */
async function readHead(request: FastifyRequest): Promise<PreviewHead> {
  const part = await request.file({ limits: { fileSize: PREVIEW_BODY_BYTES, files: 1 } });
  if (!part) throw new PorterError('PORTER_INPUT_EMPTY', 'the multipart upload has no file part');
  const fields: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(part.fields)) {
    const value = Array.isArray(field) ? field[0] : field;
    if (value && value.type === 'field') fields[name] = value.value;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let partial = false;
  for await (const chunk of part.file) {
    const buffer = chunk as Buffer;
    if (size < PREVIEW_HEAD_BYTES) {
      const room = PREVIEW_HEAD_BYTES - size;
      chunks.push(buffer.length > room ? buffer.subarray(0, room) : buffer);
      size += Math.min(room, buffer.length);
      if (buffer.length > room) partial = true;
    } else {
      // the rest of a (bounded) body is read and dropped, so the request can end
      partial = true;
    }
  }
  return {
    bytes: Buffer.concat(chunks),
    partial: partial || fields.partial === 'true',
    fields,
    fileName: part.filename,
    contentType: part.mimetype,
  };
}
