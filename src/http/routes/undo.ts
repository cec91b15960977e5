/** POST /v1/imports/{id}/undo: turns back what an ended import changed, as a new import. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { PorterContext } from '../../app/context.js';
import { describeImport } from '../../app/imports.js';
import { undoImport } from '../../app/undo.js';
import { PorterError } from '../../errors/porter-error.js';
import { waitForImport } from '../../results/import-events.js';
import { idParams } from '../schemas.js';
import { fieldsSchema } from '../strict-fields.js';
import { importSchema, withLinks } from './imports.js';

export interface UndoRoutesOptions {
  context: PorterContext;
  /** Longest a `wait` request waits for the undo to end. @defaultValue 5 minutes */
  maxWaitMs?: number;
}

const flag = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no', ''])])
  .transform((value) => value === true || value === 'true' || value === '1' || value === 'yes');

const undoFieldsSchema = z.object({
  dryRun: flag.default(false),
  evenChanged: flag.default(false),
  /** The earlier name of evenChanged, still read. */
  force: flag.default(false),
  wait: flag.default(false),
});

const DEFAULT_MAX_WAIT_MS = 5 * 60 * 1000;

export async function undoRoutes(app: FastifyInstance, options: UndoRoutesOptions): Promise<void> {
  const { context } = options;
  app.post<{ Params: { id: string }; Querystring: Record<string, unknown>; Body: unknown }>(
    '/v1/imports/:id/undo',
    {
      schema: {
        summary:
          'Undo an ended import: a new import restores what it updated, deletes what it created and re-creates what it deleted',
        description:
          'Options as query parameters or a JSON body: dryRun (plan only), evenChanged (also records changed on the server since; `force` is its earlier name, still read), wait (answer once the undo has ended, 200; 202 when it is still running after the wait limit).',
        params: idParams,
        querystring: {
          type: 'object',
          properties: {
            dryRun: { type: 'string' },
            evenChanged: { type: 'string' },
            force: { type: 'string', description: 'earlier name of evenChanged' },
            wait: { type: 'string' },
          },
        },
        body: fieldsSchema(Object.keys(undoFieldsSchema.shape), { nullable: true }),
        response: { 200: importSchema, 202: importSchema },
      },
    },
    async (request, reply) => {
      const body = isObject(request.body) ? request.body : {};
      const parsed = undoFieldsSchema.safeParse({ ...body, ...request.query });
      if (!parsed.success) {
        const name = String(parsed.error.issues[0]?.path[0] ?? 'options');
        throw new PorterError('PORTER_USAGE', `${name}: use true or false`, {
          details: { field: name },
        });
      }
      const { dryRun, evenChanged, force, wait } = parsed.data;
      const info = await undoImport(context, request.params.id, {
        dryRun,
        force: evenChanged || force,
      });
      if (!wait) return reply.status(202).send(withLinks(info));
      // a client that goes away stops the wait, not the undo
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      reply.raw.once('close', onClose);
      const subscriber = context.redis.duplicate();
      try {
        await waitForImport(context.store, subscriber, info.id, {
          timeoutMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
          signal: gone.signal,
        }).catch(() => undefined);
      } finally {
        reply.raw.off('close', onClose);
        subscriber.disconnect();
      }
      const now = await describeImport(context, info.id);
      return reply.status(now.settled ? 200 : 202).send(withLinks(now));
    },
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
