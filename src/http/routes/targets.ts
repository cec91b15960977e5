/**
 * /v1/targets: the targets this API knows (no secret), and a live check of one; a token limited
 * to some targets lists and checks those only.
 */
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import { checkTargets, listTargets } from '../../app/targets.js';
import { targetProperty } from '../schemas.js';
import { checkTargetAllowed, visibleTargets } from '../../auth/target-limits.js';

export interface TargetRoutesOptions {
  context: PorterContext;
}

const targetSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    url: { type: 'string' },
    description: { type: 'string' },
    auth: { type: 'string', enum: ['apiKey', 'basic', 'params', 'none'] },
    user: { type: 'string' },
    secrets: {
      type: 'array',
      items: { type: 'string' },
      description: 'where each secret is read from (env:NAME or file:PATH), never the secret',
    },
    maxRps: { type: 'integer' },
    maxInFlight: { type: 'integer' },
    readOnly: { type: 'boolean' },
    fingerprint: { type: 'string' },
    from: { type: 'string', enum: ['file', 'environment'] },
    problem: { type: 'string' },
  },
} as const;

const checkSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    url: { type: 'string' },
    ok: { type: 'boolean' },
    reason: { type: 'string' },
    answerMs: { type: 'integer' },
    readOnly: { type: 'boolean' },
    counts: {
      type: 'object',
      properties: {
        users: { type: 'integer' },
        groups: { type: 'integer' },
        acls: { type: 'integer' },
      },
    },
  },
} as const;

export async function targetRoutes(
  app: FastifyInstance,
  options: TargetRoutesOptions,
): Promise<void> {
  const { context } = options;
  app.get(
    '/v1/targets',
    {
      schema: {
        summary: 'The targets (named admin servers) jobs may name; no secret, only its source',
        response: { 200: { type: 'array', items: targetSchema } },
      },
    },
    // a token limited to some targets sees those only
    async () => visibleTargets(listTargets(context), (target) => target.name),
  );
  app.get<{ Params: { name: string }; Querystring: { counts?: boolean } }>(
    '/v1/targets/:name/check',
    {
      schema: {
        summary:
          'Check a target live: reachable, signed in, answer time, and with counts=true its numbers of users, groups and ACLs',
        params: {
          type: 'object',
          required: ['name'],
          properties: { name: targetProperty },
        },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { counts: { type: 'boolean', default: false } },
        },
        response: { 200: checkSchema },
      },
    },
    async (request) => {
      const name = context.targets.require(request.params.name).name;
      checkTargetAllowed(name);
      const [check] = await checkTargets(context, [name], { counts: request.query.counts });
      return check;
    },
  );
}
