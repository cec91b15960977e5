/**
 * The target of the job, schedule or target a request names (`/v1/imports/:id`,
 * `/v1/exports/:id`, `/v1/migrations/:id`, `/v1/schedules/:name`, `/v1/import-schedules/:name`,
 * `/v1/targets/:name`), and the target of a SCIM route (`/scim/v2/:target/…`).
 */
import type { FastifyRequest } from 'fastify';
import type { PorterContext } from '../app/context.js';
import { requireSchedule } from '../app/exports.js';
import { findImportSchedule } from '../app/import-schedules.js';
import { migrationStore } from '../app/migrations.js';
import { DEFAULT_TARGET } from '../targets/targets.js';

export async function jobTargetOf(
  context: PorterContext,
  request: FastifyRequest,
): Promise<string | undefined> {
  const params = request.params as { id?: unknown; name?: unknown; target?: unknown } | undefined;
  const url = request.routeOptions.url ?? '';
  if (typeof params?.target === 'string' && url.startsWith('/scim/v2/:target')) {
    return params.target;
  }
  const name = params?.name;
  if (typeof name === 'string' && url.startsWith('/v1/targets/')) return name;
  if (typeof name === 'string' && url.startsWith('/v1/import-schedules/')) {
    const info = await findImportSchedule(context, name);
    return info ? (info.request.options.target ?? DEFAULT_TARGET) : undefined;
  }
  if (typeof name === 'string' && url.startsWith('/v1/schedules/')) {
    const info = await requireSchedule(context, name).catch(() => undefined);
    return info ? (info.request.target ?? DEFAULT_TARGET) : undefined;
  }
  const id = params?.id;
  if (typeof id !== 'string') return undefined;
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
