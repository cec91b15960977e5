/** GET /v1/audit: the audit trail, newest first (admins). */
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import { securityOf } from '../../app/security.js';
import { parseSince } from '../../audit/since.js';

export async function auditRoutes(
  app: FastifyInstance,
  options: { context: PorterContext },
): Promise<void> {
  const { audit } = securityOf(options.context);
  app.get<{ Querystring: { since?: string; who?: string; action?: string; limit?: number } }>(
    '/v1/audit',
    {
      schema: {
        summary: 'Audit events, newest first (admin role)',
        querystring: {
          type: 'object',
          properties: {
            since: { type: 'string', description: 'ISO time or a duration back from now: 24h, 7d' },
            who: { type: 'string', maxLength: 200 },
            action: { type: 'string', maxLength: 100 },
            limit: { type: 'integer', minimum: 1, maximum: 5000, default: 200 },
          },
        },
      },
    },
    async (request) =>
      audit.read({
        since: parseSince(request.query.since),
        who: request.query.who,
        action: request.query.action,
        limit: request.query.limit,
      }),
  );
}
