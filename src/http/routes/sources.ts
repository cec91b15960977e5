/**
 * /v1/sources and /v1/source-imports: the directory sources (PORTER_SOURCES_FILE) and an import
 * or sync whose rows are read from one, as `porter import --source` and `porter sync --source`
 * start it. The target is checked before the directory is read; a read cut short answers
 * PORTER_SOURCE_FAILED with the reason, and no import is stored.
 */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import { startSourceImport } from '../../app/source-import.js';
import { loadSources } from '../../sources/sources.js';
import { parseSourceImportBody, SOURCE_IMPORT_FIELD_NAMES } from '../source-import-request.js';
import { fieldsSchema } from '../strict-fields.js';
import { importSchema, withLinks } from './imports.js';

export interface SourceRoutesOptions {
  context: PorterContext;
}

const sourceSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    kind: { type: 'string' },
    flavor: { type: 'string' },
    url: { type: 'string', description: 'where it is read from, credentials left out' },
    description: { type: 'string' },
    startTLS: { type: 'boolean' },
    bindDN: { type: 'string' },
    secrets: {
      type: 'array',
      items: { type: 'string' },
      description: 'where each secret is read from (`env:NAME`, `file:PATH`), never the secret',
    },
    baseDN: { type: 'string' },
    filter: { type: 'string' },
    pageSize: { type: 'integer' },
    anchorAttribute: { type: 'string' },
    groups: { type: 'boolean', description: 'groups are configured: resource groups can be read' },
    problem: { type: 'string', description: 'why it cannot be used here, if so' },
  },
} as const;

export async function sourceRoutes(
  app: FastifyInstance,
  options: SourceRoutesOptions,
): Promise<void> {
  const { context } = options;

  app.get(
    '/v1/sources',
    {
      schema: {
        summary: 'The directory sources (PORTER_SOURCES_FILE); no secret is shown',
        response: { 200: { type: 'array', items: sourceSchema } },
      },
    },
    async () =>
      loadSources(context.env)
        .list()
        .map((source) => source.summary),
  );

  app.post(
    '/v1/source-imports',
    {
      schema: {
        summary: 'Read a directory source whole and queue its users or groups as an import',
        description:
          'A JSON body: `source` (GET /v1/sources), `resource` (users or groups), `mode`, ' +
          '`incremental` (only the entries changed since the last read, upserted), `mapping` ' +
          '(an object or its JSON text), and the options of POST /v1/imports but the ones of a ' +
          'file (delimiter, encoding, format); with mode sync also missing, maxDeletes, protect ' +
          '(a list or one key per line), scopeGroup, scopeMatch. The directory is read before ' +
          'the answer: a read cut short is 502 PORTER_SOURCE_FAILED and no import is stored.',
        body: fieldsSchema(SOURCE_IMPORT_FIELD_NAMES),
        response: { 202: importSchema },
      },
    },
    async (request, reply) => {
      const info = await startSourceImport(context, parseSourceImportBody(request.body));
      return reply.status(202).send(withLinks(info));
    },
  );
}
