/** /v1/meta: what the API accepts (resources and their fields, modes, formats), for screens. */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { RESOURCE_NAMES } from '../../admin/resources.js';
import { EXPORT_FORMATS, EXPORT_RESOURCES } from '../../export/export-types.js';
import { describeFields } from '../../ingest/preview.js';
import { CSV_DELIMITERS, DEFAULT_LIST_SEPARATOR } from '../../ingest/index.js';
import { IMPORT_MODES, LOOKUP_MODES, MISSING_ACTIONS, RECORD_ACTIONS } from '../../model/import.js';
import { PORTER_VERSION } from '../../version.js';
import { PREVIEW_HEAD_BYTES } from './previews.js';

export interface MetaRoutesOptions {
  maxUploadBytes: number;
}

export async function metaRoutes(app: FastifyInstance, options: MetaRoutesOptions): Promise<void> {
  app.get(
    '/v1/meta',
    {
      schema: {
        summary:
          'Resources and their fields, import modes, sync and record actions, lookups, export formats',
      },
    },
    async () => ({
      version: PORTER_VERSION,
      resources: Object.fromEntries(RESOURCE_NAMES.map((name) => [name, describeFields(name)])),
      modes: IMPORT_MODES,
      missingActions: MISSING_ACTIONS,
      recordActions: RECORD_ACTIONS,
      lookups: LOOKUP_MODES,
      delimiters: CSV_DELIMITERS,
      listSeparator: DEFAULT_LIST_SEPARATOR,
      exportResources: EXPORT_RESOURCES,
      exportFormats: EXPORT_FORMATS,
      maxUploadBytes: options.maxUploadBytes,
      previewHeadBytes: PREVIEW_HEAD_BYTES,
    }),
  );
}
