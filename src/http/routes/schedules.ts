/** /v1/schedules: create, list, read and remove scheduled exports. */
import { visibleTargets } from '../../auth/target-limits.js';
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import {
  addSchedule,
  apiOutDir,
  deleteSchedule,
  listSchedules,
  requireSchedule,
} from '../../app/exports.js';
import {
  EXPORT_FORMATS,
  EXPORT_RESOURCES,
  type ExportFormat,
  type ExportResource,
} from '../../export/export-types.js';
import { exportRequestSchema, targetProperty } from '../schemas.js';

export interface ScheduleRoutesOptions {
  context: PorterContext;
}

const scheduleSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    cron: { type: 'string' },
    tz: { type: 'string' },
    keep: { type: 'integer' },
    request: exportRequestSchema,
    next: { type: 'string', description: 'when it runs next (ISO time)' },
    iterations: { type: 'integer', description: 'runs started so far' },
  },
} as const;

const nameParams = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
} as const;

interface ScheduleBody {
  name: string;
  cron: string;
  tz?: string;
  resource: ExportResource;
  format?: ExportFormat;
  out?: string;
  keep?: number;
  target?: string;
}

/** The schedule routes, registered as a plugin beside the import routes. */
export async function scheduleRoutes(
  app: FastifyInstance,
  options: ScheduleRoutesOptions,
): Promise<void> {
  const { context } = options;

  app.post<{ Body: ScheduleBody }>(
    '/v1/schedules',
    {
      schema: {
        summary: 'Create or replace a scheduled export',
        description:
          'Runs go to <PORTER_EXPORT_DIR>[/<out>]/<name>/<export id>/. The cron pattern and the ' +
          'time zone are checked before anything is stored.',
        body: {
          type: 'object',
          required: ['name', 'cron', 'resource'],
          additionalProperties: false,
          properties: {
            name: { type: 'string' },
            cron: { type: 'string', description: '5 fields, or 6 with seconds first' },
            tz: { type: 'string', description: 'IANA time zone, e.g. Europe/Berlin' },
            resource: { type: 'string', enum: [...EXPORT_RESOURCES] },
            format: { type: 'string', enum: [...EXPORT_FORMATS], default: 'csv' },
            out: { type: 'string', description: 'relative subdirectory of PORTER_EXPORT_DIR' },
            keep: { type: 'integer', minimum: 1, description: 'completed runs kept' },
            target: targetProperty,
          },
        },
        response: { 201: scheduleSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const info = await addSchedule(context, {
        name: body.name,
        cron: body.cron,
        tz: body.tz,
        keep: body.keep,
        resource: body.resource,
        format: body.format ?? 'csv',
        outDir: apiOutDir(context, body.out),
        target: body.target,
      });
      return reply.status(201).send(info);
    },
  );

  app.get(
    '/v1/schedules',
    {
      schema: {
        summary: 'List the schedules, soonest first',
        response: { 200: { type: 'array', items: scheduleSchema } },
      },
    },
    async () => visibleTargets(await listSchedules(context), (info) => info.request.target),
  );

  app.get<{ Params: { name: string } }>(
    '/v1/schedules/:name',
    { schema: { summary: 'One schedule', params: nameParams, response: { 200: scheduleSchema } } },
    async (request) => requireSchedule(context, request.params.name),
  );

  app.delete<{ Params: { name: string } }>(
    '/v1/schedules/:name',
    {
      schema: {
        summary: 'Remove a schedule; its past runs and their files stay',
        params: nameParams,
        response: { 204: { type: 'null' } },
      },
    },
    async (request, reply) => {
      await deleteSchedule(context, request.params.name);
      return reply.status(204).send();
    },
  );
}
