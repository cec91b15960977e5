/** The target of the job a request names (`/v1/imports/:id`, `/v1/exports/:id`, `/v1/migrations/:id`). */
import type { FastifyRequest } from 'fastify';
import type { PorterContext } from '../app/context.js';
import { migrationStore } from '../app/migrations.js';
import { DEFAULT_TARGET } from '../targets/targets.js';

export async function jobTargetOf(
  context: PorterContext,
  request: FastifyRequest,
): Promise<string | undefined> {
  const id = (request.params as { id?: unknown } | undefined)?.id;
  if (typeof id !== 'string') return undefined;
  const url = request.routeOptions.url ?? '';
  if (url.startsWith('/v1/imports/')) {
    const info = await context.store.get(id);
    return info ? (info.options.target ?? DEFAULT_TARGET) : undefined;
  }
  if (url.startsWith('/v1/exports/')) {
    const info = await context.exportStore.get(id);
    return info ? (info.request.target ?? DEFAULT_TARGET) : undefined;
  }
  if (url.startsWith('/v1/migrations/')) {
    const info = await migrationStore(context).get(id, context.store);
    return info ? (info.options.target ?? DEFAULT_TARGET) : undefined;
  }
  return undefined;
}
