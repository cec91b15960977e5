/**
 * /v1/notify: the notification channels (no secret), a test message to one, the deliveries with
 * the log of their attempts, and a redelivery (same webhook-id).
 */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import {
  notifyDeliveries,
  notifyDelivery,
  redeliverNotification,
  testChannel,
} from '../../app/notify.js';
import { currentPrincipal } from '../../auth/acting.js';

export async function notifyRoutes(
  app: FastifyInstance,
  options: { context: PorterContext },
): Promise<void> {
  const { context } = options;
  app.get(
    '/v1/notify/channels',
    { schema: { summary: 'Notification channels (PORTER_NOTIFY_FILE); no secret is shown' } },
    async () => context.channels.list().map((channel) => channel.summary),
  );
  app.post<{ Params: { name: string } }>(
    '/v1/notify/channels/:name/test',
    {
      schema: {
        summary: 'Queue a test message to a channel (operator role); 202 with its delivery id',
        params: {
          type: 'object',
          properties: { name: { type: 'string', maxLength: 40 } },
          required: ['name'],
        },
      },
    },
    async (request, reply) => {
      const job = await testChannel(
        context,
        request.params.name,
        currentPrincipal()?.name ?? 'api',
      );
      return reply.code(202).send({ id: job.id, channel: job.channel, state: 'waiting' });
    },
  );
  app.get<{ Querystring: { failed?: boolean; limit?: number } }>(
    '/v1/notify/deliveries',
    {
      schema: {
        summary: 'Deliveries, newest first; failed=true: given up or failing now',
        querystring: {
          type: 'object',
          properties: {
            failed: { type: 'boolean' },
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          },
        },
      },
    },
    async (request) =>
      notifyDeliveries(context, { failed: request.query.failed, limit: request.query.limit }),
  );
  app.get<{ Params: { id: string } }>(
    '/v1/notify/deliveries/:id',
    {
      schema: {
        summary: 'One delivery and the log of its attempts',
        params: {
          type: 'object',
          properties: { id: { type: 'string', maxLength: 300 } },
          required: ['id'],
        },
      },
    },
    async (request) => notifyDelivery(context, request.params.id),
  );
  app.post<{ Params: { id: string } }>(
    '/v1/notify/deliveries/:id/redeliver',
    {
      schema: {
        summary: 'Send a delivered or failed delivery again, same webhook-id (operator role)',
        params: {
          type: 'object',
          properties: { id: { type: 'string', maxLength: 300 } },
          required: ['id'],
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await redeliverNotification(context, request.params.id)),
  );
}
