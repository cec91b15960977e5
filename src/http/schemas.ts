/** JSON schema pieces the routes share (fastify validates with them; OpenAPI describes them). */

/** `:id` in a route's path. */
export const idParams = {
  type: 'object',
  properties: { id: { type: 'string' } },
  required: ['id'],
} as const;

/** What an export run or a schedule was asked for. */
export const exportRequestSchema = {
  type: 'object',
  properties: {
    target: { type: 'string' },
    targetFingerprint: { type: 'string' },
    targetUrl: { type: 'string' },
    resource: { type: 'string' },
    format: { type: 'string' },
    outDir: { type: 'string' },
  },
} as const;

/** `target` in a request body: the target's name (see GET /v1/targets). */
export const targetProperty = {
  type: 'string',
  pattern: '^[a-z0-9][a-z0-9_-]{0,39}$',
  description: 'the target (named admin server), default `default`; see GET /v1/targets',
} as const;
