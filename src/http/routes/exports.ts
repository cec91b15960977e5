/** /v1/exports: queue an export, follow it, download its files. */
import { visibleTargets } from '../../auth/target-limits.js';
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import {
  apiOutDir,
  listExports,
  openExportFile,
  requireExport,
  startExport,
} from '../../app/exports.js';
import {
  EXPORT_FORMATS,
  EXPORT_RESOURCES,
  type ExportFormat,
  type ExportInfo,
  type ExportResource,
} from '../../export/export-types.js';
import { idParams, exportRequestSchema, targetProperty } from '../schemas.js';

export interface ExportRoutesOptions {
  context: PorterContext;
}

const fileSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    content: { type: 'string' },
    format: { type: 'string' },
    records: { type: 'integer' },
    bytes: { type: 'integer' },
    sha256: { type: 'string' },
  },
} as const;

export const exportSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    state: { type: 'string', enum: ['queued', 'running', 'completed', 'failed'] },
    reason: { type: 'string' },
    request: exportRequestSchema,
    schedule: {
      type: 'object',
      properties: { name: { type: 'string' }, keep: { type: 'integer' } },
    },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    startedAt: { type: 'string' },
    finishedAt: { type: 'string' },
    dir: { type: 'string', description: 'directory of the run on the workers’ file system' },
    written: { type: 'integer', description: 'records written so far' },
    counts: { type: 'object', additionalProperties: { type: 'integer' } },
    files: { type: 'array', items: fileSchema },
    warnings: { type: 'array', items: { type: 'string' } },
    removedAt: {
      type: 'string',
      description: 'when the schedule’s retention removed the run’s files (no file links then)',
    },
    links: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

/** The export with links to itself and to each file (once there are files, until removed). */
export function withExportLinks(info: ExportInfo): ExportInfo & { links: Record<string, string> } {
  const self = `/v1/exports/${encodeURIComponent(info.id)}`;
  const links: Record<string, string> = { self };
  if (info.state === 'completed' && info.removedAt === undefined) {
    links['manifest.json'] = `${self}/files/manifest.json`;
    for (const file of info.files)
      links[file.name] = `${self}/files/${encodeURIComponent(file.name)}`;
  }
  return { ...info, links };
}

/** The export routes, registered as a plugin beside the import routes. */
export async function exportRoutes(
  app: FastifyInstance,
  options: ExportRoutesOptions,
): Promise<void> {
  const { context } = options;

  app.post<{
    Body: { resource: ExportResource; format?: ExportFormat; out?: string; target?: string };
  }>(
    '/v1/exports',
    {
      schema: {
        summary: 'Queue an export of every user, group or ACL to files',
        description:
          'A worker writes the files into <PORTER_EXPORT_DIR>[/<out>]/<export id>/. ' +
          '`all` with `json`, or `bundle`, gives one JSON document of all three resources.',
        body: {
          type: 'object',
          required: ['resource'],
          additionalProperties: false,
          properties: {
            resource: { type: 'string', enum: [...EXPORT_RESOURCES] },
            format: { type: 'string', enum: [...EXPORT_FORMATS], default: 'csv' },
            out: { type: 'string', description: 'relative subdirectory of PORTER_EXPORT_DIR' },
            target: targetProperty,
          },
        },
        response: { 202: exportSchema },
      },
    },
    async (request, reply) => {
      const info = await startExport(context, {
        resource: request.body.resource,
        format: request.body.format ?? 'csv',
        outDir: apiOutDir(context, request.body.out),
        target: request.body.target,
      });
      return reply.status(202).send(withExportLinks(info));
    },
  );

  app.get(
    '/v1/exports',
    {
      schema: {
        summary: 'List recent exports, newest first',
        response: { 200: { type: 'array', items: exportSchema } },
      },
    },
    async () =>
      visibleTargets(await listExports(context), (info) => info.request.target).map(
        withExportLinks,
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/exports/:id',
    {
      schema: {
        summary: 'State, records written so far and files of an export',
        params: idParams,
        response: { 200: exportSchema },
      },
    },
    async (request) => withExportLinks(await requireExport(context, request.params.id)),
  );

  app.get<{ Params: { id: string; name: string } }>(
    '/v1/exports/:id/files/:name',
    {
      schema: {
        summary: 'Download one file of a completed export, streamed',
        description: 'Only the names its manifest lists, and manifest.json, are served.',
        params: {
          type: 'object',
          properties: { id: { type: 'string' }, name: { type: 'string' } },
          required: ['id', 'name'],
        },
      },
    },
    async (request, reply) => {
      const file = await openExportFile(context, request.params.id, request.params.name);
      return reply
        .header('content-type', file.contentType)
        .header('content-length', file.bytes)
        .header('content-disposition', `attachment; filename="${request.params.id}-${file.name}"`)
        .send(file.stream);
    },
  );
}
