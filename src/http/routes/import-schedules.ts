/**
 * /v1/import-schedules: list, read (with the last runs) and remove scheduled imports. They are
 * created from the command line only: a schedule reads a path on the worker's host, which an
 * HTTP client must not be able to choose.
 */
import { visibleOptions } from '../../auth/mapping-visibility.js';
import { visibleTargets } from '../../auth/target-limits.js';
import type { ImportOptions } from '../../model/import.js';
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import {
  deleteImportSchedule,
  describeImportSchedule,
  listImportSchedules,
} from '../../app/import-schedules.js';
import { PorterError } from '../../errors/porter-error.js';

export interface ImportScheduleRoutesOptions {
  context: PorterContext;
}

const importScheduleSchema = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['import'] },
    name: { type: 'string' },
    cron: { type: 'string' },
    tz: { type: 'string' },
    request: {
      type: 'object',
      description:
        'the file (on the worker host) or the directory source read at each run, and the import options',
      additionalProperties: true,
      properties: {
        file: { type: 'string' },
        source: {
          type: 'object',
          properties: { name: { type: 'string' }, incremental: { type: 'boolean' } },
        },
        evenUnchanged: { type: 'boolean' },
        options: { type: 'object', additionalProperties: true },
      },
    },
    next: { type: 'string', description: 'when it runs next (ISO time)' },
    iterations: { type: 'integer', description: 'runs started so far' },
    addedBy: {
      type: 'string',
      description: 'the principal that added it; its runs start imports on its behalf',
    },
  },
} as const;

const runSchema = {
  type: 'object',
  properties: {
    at: { type: 'string' },
    outcome: { type: 'string', enum: ['imported', 'unchanged', 'failed'] },
    jobId: { type: 'string' },
    sha256: { type: 'string' },
    importId: { type: 'string' },
    note: { type: 'string' },
  },
} as const;

const nameParams = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
} as const;

/** A schedule as the caller may read it: its mapping's tables only for those who may see them. */
function withVisibleOptions<T extends { request: { options: ImportOptions } }>(schedule: T): T {
  return {
    ...schedule,
    request: { ...schedule.request, options: visibleOptions(schedule.request.options) },
  };
}

/** The import schedule routes, registered as a plugin beside the export schedule routes. */
export async function importScheduleRoutes(
  app: FastifyInstance,
  options: ImportScheduleRoutesOptions,
): Promise<void> {
  const { context } = options;

  app.get(
    '/v1/import-schedules',
    {
      schema: {
        summary: 'List the import schedules, soonest first',
        response: { 200: { type: 'array', items: importScheduleSchema } },
      },
    },
    async () =>
      visibleTargets(await listImportSchedules(context), (info) => info.request.options.target).map(
        withVisibleOptions,
      ),
  );

  app.get<{ Params: { name: string } }>(
    '/v1/import-schedules/:name',
    {
      schema: {
        summary: 'One import schedule with its last runs, newest first',
        params: nameParams,
        response: {
          200: {
            ...importScheduleSchema,
            properties: {
              ...importScheduleSchema.properties,
              runs: { type: 'array', items: runSchema },
            },
          },
        },
      },
    },
    async (request) =>
      withVisibleOptions(await describeImportSchedule(context, request.params.name)),
  );

  app.delete<{ Params: { name: string } }>(
    '/v1/import-schedules/:name',
    {
      schema: {
        summary: 'Remove an import schedule; the imports it made and its history stay',
        params: nameParams,
        response: { 204: { type: 'null' } },
      },
    },
    async (request, reply) => {
      if (!(await deleteImportSchedule(context, request.params.name))) {
        throw new PorterError(
          'PORTER_NOT_FOUND',
          `no import schedule named ${JSON.stringify(request.params.name)}`,
        );
      }
      return reply.status(204).send();
    },
  );
}
