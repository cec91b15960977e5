/**
 * /healthz: the process is alive (no dependency is asked). /readyz: it can work now (Redis and
 * the admin server answer), 503 with the failing check's reason otherwise, and 503 `stopping`
 * once the process drains its work before it exits. Both need no token.
 */
import type { FastifyInstance } from 'fastify';
import type { ReadinessProbe } from '../../app/readiness.js';

export interface HealthRoutesOptions {
  probe: ReadinessProbe;
}

const checkSchema = {
  type: 'object',
  properties: { ok: { type: 'boolean' }, ms: { type: 'integer' }, reason: { type: 'string' } },
} as const;

const readinessSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ready', 'not_ready', 'stopping'] },
    checks: {
      type: 'object',
      properties: {
        redis: checkSchema,
        admin: checkSchema,
        targets: { type: 'object', additionalProperties: checkSchema },
      },
    },
  },
} as const;

export async function healthRoutes(
  app: FastifyInstance,
  options: HealthRoutesOptions,
): Promise<void> {
  app.get(
    '/healthz',
    {
      config: { access: 'public' },
      schema: { summary: 'Liveness check (no token needed)', security: [] },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      config: { access: 'public' },
      schema: {
        summary:
          'Readiness check (no token needed): Redis and the admin server answer; 503 with the reason otherwise',
        security: [],
        response: { 200: readinessSchema, 503: readinessSchema },
      },
    },
    async (_request, reply) => {
      const readiness = await options.probe.check();
      return reply
        .status(readiness.ready ? 200 : 503)
        .header('cache-control', 'no-store')
        .send({
          status: readiness.stopping ? 'stopping' : readiness.ready ? 'ready' : 'not_ready',
          checks: readiness.checks,
        });
    },
  );
}
