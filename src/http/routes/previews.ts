/** /v1/previews: the columns and first records of an upload, read from its head, nothing queued. */
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PorterError } from '../../errors/porter-error.js';
import { previewUpload, PREVIEW_MAX_RECORDS } from '../../ingest/preview.js';
import type { PorterContext } from '../../app/context.js';
import { readDirectory } from '../../app/imports.js';
import { IMPORT_FIELD_NAMES, parseImportFields } from '../import-request.js';
import { checkFieldNames } from '../strict-fields.js';
import { readUploadForm, refuseAfterFile } from '../upload-form.js';
import { checkTargetAllowed } from '../../auth/target-limits.js';

export interface PreviewRoutesOptions {
  context: PorterContext;
}

/** Bytes of the upload a preview reads at most; the rest of the body is discarded unread. */
export const PREVIEW_HEAD_BYTES = 256 * 1024;

/** What a preview takes besides an upload's fields. */
const PREVIEW_FIELDS = ['limit', 'partial'];

/** The option fields and file head of a multipart body, with the boundaries around them. */
const PREVIEW_BODY_BYTES = PREVIEW_HEAD_BYTES + 1024 * 1024;

interface PreviewHead {
  bytes: Uint8Array;
  /** Whether the file went on past the bytes read. */
  partial: boolean;
  fields: Record<string, string>;
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
      config: { upload: true },
      schema: {
        summary:
          'Preview an upload: its columns, their fields and its first records, nothing queued',
        description:
          'multipart/form-data with the same option fields as POST /v1/imports (resource, mode, ' +
          'delimiter, listSeparator, encoding, emptyAsClear, format, mapping) before the file part, plus ' +
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
      const { limit: limitText, partial: _partial, ...fields } = head.fields;
      const parsed = parseImportFields(fields);
      // a preview is an import's first step: a token limited to other targets previews none here
      checkTargetAllowed(context.targets.resolve(parsed.options.target).name);
      const limit = limitText === undefined ? undefined : Number(limitText);
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
        encoding: parsed.options.encoding,
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
  const form = await readUploadForm(request, { fileSize: PREVIEW_BODY_BYTES });
  checkFieldNames(form.fields, [...IMPORT_FIELD_NAMES, ...PREVIEW_FIELDS], 'form');
  const chunks: Buffer[] = [];
  let size = 0;
  let partial = false;
  for await (const chunk of form.file.file) {
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
  await refuseAfterFile(form.rest);
  return {
    bytes: Buffer.concat(chunks),
    partial: partial || form.fields.partial === 'true',
    fields: form.fields,
    fileName: form.file.filename,
    contentType: form.file.mimetype,
  };
}
