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
    resource: { type: 'string' },
    format: { type: 'string' },
    outDir: { type: 'string' },
  },
} as const;
