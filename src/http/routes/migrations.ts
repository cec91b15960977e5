/**
 * /v1/migrations: a bundle uploaded as the request body (or a source target named by `from`),
 * and the migration's state, its two targets included.
 */
import { visibleTargets } from '../../auth/target-limits.js';
import { PassThrough, pipeline, type Readable } from 'node:stream';
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import {
  migrationStore,
  requireMigration,
  startLiveMigration,
  startMigration,
  writeIdMap,
} from '../../app/migrations.js';
import { PorterError } from '../../errors/porter-error.js';
import {
  MIGRATION_MODES,
  type MigrationInfo,
  type MigrationMode,
} from '../../migrate/migration-model.js';
import { checkTargetName } from '../../targets/targets.js';
import { idParams, targetProperty } from '../schemas.js';
import { limitBytes, uploadTooLarge } from '../size-limit.js';

export interface MigrationRoutesOptions {
  context: PorterContext;
  maxUploadBytes: number;
}

const migrationSchema = {
  type: 'object',
  additionalProperties: true,
  properties: {
    id: { type: 'string' },
    state: { type: 'string' },
    reason: { type: 'string' },
    stage: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    startedBy: { type: 'string' },
    stages: { type: 'array', items: { type: 'object', additionalProperties: true } },
    links: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

const querySchema = {
  type: 'object',
  properties: {
    mode: { type: 'string', enum: [...MIGRATION_MODES] },
    dryRun: { type: 'boolean' },
    allowAdmin: { type: 'boolean' },
    batchSize: { type: 'integer', minimum: 1, maximum: 10_000 },
    target: targetProperty,
    from: targetProperty,
  },
  additionalProperties: false,
} as const;

interface MigrationQuery {
  /** The target written to. @defaultValue default */
  target?: string;
  /** A source target read live, instead of a bundle in the body. */
  from?: string;
  mode?: MigrationMode;
  dryRun?: boolean;
  allowAdmin?: boolean;
  batchSize?: number;
}

function withLinks(info: MigrationInfo): MigrationInfo & { links: Record<string, string> } {
  const self = `/v1/migrations/${encodeURIComponent(info.id)}`;
  return { ...info, links: { self, idMap: `${self}/id-map.csv` } };
}

export async function migrationRoutes(
  app: FastifyInstance,
  options: MigrationRoutesOptions,
): Promise<void> {
  const { context, maxUploadBytes } = options;
  // the bundle is streamed into Redis, never parsed into memory by fastify
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(['application/json'], (_request, payload, done) => done(null, payload));

  app.post<{ Querystring: MigrationQuery }>(
    '/v1/migrations',
    {
      config: { upload: true },
      schema: {
        summary:
          'Migrate a bundle (porter export --format bundle) or a live source target into a target',
        description:
          'The bundle is the application/json request body; or, with no body, `from` names a ' +
          'source target that a worker reads live. `target` names the target written to ' +
          '(default `default`); options (mode, dryRun, allowAdmin, batchSize) are query ' +
          'parameters too. Stages: groups, ACLs, users, memberships.',
        querystring: querySchema,
        consumes: ['application/json'],
        response: { 202: migrationSchema },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const options = {
        ...(query.target !== undefined ? { target: checkTargetName(query.target, 'target') } : {}),
        mode: query.mode ?? 'upsert',
        dryRun: query.dryRun === true,
        allowAdmin: query.allowAdmin === true,
        batchSize: query.batchSize ?? 100,
      };
      const declared = Number(request.headers['content-length'] ?? 0);
      const body = request.body as Readable | undefined;
      if (query.from !== undefined) {
        if (declared > 0 || request.headers['transfer-encoding'] !== undefined) {
          throw new PorterError(
            'PORTER_USAGE',
            'from names the source: send no bundle with it (or send the bundle without from)',
          );
        }
        const info = await startLiveMigration(context, {
          from: checkTargetName(query.from, 'from'),
          options,
        });
        return reply.status(202).send(withLinks(info));
      }
      if (declared > maxUploadBytes) throw uploadTooLarge(maxUploadBytes);
      if (!body || typeof body.pipe !== 'function') {
        throw new PorterError(
          'PORTER_INPUT_EMPTY',
          'send the bundle as the request body, or name a source target with from',
        );
      }
      const info = await startMigration(context, {
        source: pipeline(body, limitBytes(maxUploadBytes), () => {}),
        options,
      });
      return reply.status(202).send(withLinks(info));
    },
  );

  app.get<{ Querystring: { limit?: number } }>(
    '/v1/migrations',
    {
      schema: {
        summary: 'List recent migrations, newest first',
        querystring: {
          type: 'object',
          properties: { limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
          additionalProperties: false,
        },
        response: { 200: { type: 'array', items: migrationSchema } },
      },
    },
    async (request) => {
      const list = await migrationStore(context).list(context.store, request.query.limit ?? 50);
      return visibleTargets(list, (info) => info.options.target).map(withLinks);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/migrations/:id',
    {
      schema: {
        summary: "A migration's state, its stage, and each stage's counts",
        params: idParams,
        response: { 200: migrationSchema },
      },
    },
    async (request) => withLinks(await requireMigration(context, request.params.id)),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/migrations/:id/id-map.csv',
    {
      schema: {
        summary: 'The id map: resource, sourceId, targetId, key of every record matched so far',
        params: idParams,
      },
    },
    async (request, reply) => {
      await requireMigration(context, request.params.id);
      const body = new PassThrough();
      void reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${request.params.id}-id-map.csv"`)
        .send(body);
      writeIdMap(context, request.params.id, body).then(
        () => body.end(),
        (error: unknown) => body.destroy(error as Error),
      );
      return reply;
    },
  );
}
