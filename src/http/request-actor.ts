/** The actor of each HTTP request: who (once authenticated), from where, and its audit action. */
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../auth/acting.js';

const actors = new WeakMap<FastifyRequest, Actor>();

/** The request's actor, made on first use. */
export function actorOf(request: FastifyRequest): Actor {
  let actor = actors.get(request);
  if (!actor) {
    actor = {
      from: {
        address: request.ip,
        userAgent: String(request.headers['user-agent'] ?? '').slice(0, 300) || undefined,
      },
      created: [],
    };
    actors.set(request, actor);
  }
  return actor;
}
