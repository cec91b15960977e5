/**
 * /v1/session: who the caller is, and the console's sign-in with OpenID Connect. The callback
 * makes a session (src/auth/sessions.ts) whose id goes in an HttpOnly cookie; the console reads
 * its CSRF token from GET /v1/session and sends it with each change. Sign-out deletes the
 * session.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import { securityOf } from '../../app/security.js';
import { OidcSignIn, oidcSettings } from '../../auth/oidc.js';
import { PorterError } from '../../errors/porter-error.js';
import { checkFailureLimit, recordFailure, SESSION_COOKIE, signIn } from '../access-control.js';
import { cookieValue, sessionCookie } from '../board-session.js';
import { actorOf } from '../request-actor.js';

export interface SessionRoutesOptions {
  context: PorterContext;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

export async function sessionRoutes(
  app: FastifyInstance,
  options: SessionRoutesOptions,
): Promise<void> {
  const { context } = options;
  const { sessions } = securityOf(context);
  const settings = oidcSettings(context.env);
  const oidc = settings
    ? new OidcSignIn(settings, context.redis, context.env.PORTER_PREFIX)
    : undefined;
  const cookie = (request: FastifyRequest, value: string | undefined): string =>
    sessionCookie(SESSION_COOKIE, value, {
      secure: request.protocol === 'https',
      path: '/',
      maxAgeSeconds: sessions.ttlSeconds,
      // the callback arrives from the provider's site: Lax lets the console's first page see it;
      // every change also needs the session's CSRF header
      sameSite: 'Lax',
    });
  const hidden = { hide: true } as const;

  app.get('/v1/session/providers', { config: { access: 'public' }, schema: hidden }, async () => ({
    oidc: oidc !== undefined,
  }));

  app.get(
    '/v1/session',
    { schema: { summary: 'Who the caller is: name, role, target limits' } },
    async (request) => {
      const principal = actorOf(request).principal!;
      const session = await sessions.get(cookieValue(request.headers.cookie, SESSION_COOKIE));
      return {
        name: principal.name,
        role: principal.role,
        via: principal.via,
        ...(principal.targets ? { targets: principal.targets } : {}),
        ...(session && !request.headers.authorization ? { csrf: session.csrf } : {}),
      };
    },
  );

  app.get(
    '/v1/session/oidc',
    { config: { access: 'public' }, schema: hidden },
    async (_request, reply) => {
      if (!oidc)
        throw new PorterError(
          'PORTER_NOT_FOUND',
          'no OpenID Connect sign-in configured (PORTER_OIDC_ISSUER)',
        );
      return reply.header('cache-control', 'no-store').redirect((await oidc.start()).href);
    },
  );

  app.get(
    '/v1/session/callback',
    { config: { access: 'public' }, schema: hidden },
    async (request, reply) => {
      if (!oidc)
        throw new PorterError(
          'PORTER_NOT_FOUND',
          'no OpenID Connect sign-in configured (PORTER_OIDC_ISSUER)',
        );
      await checkFailureLimit(context, request);
      const callback = new URL(request.url, settings!.redirectUrl);
      let principal;
      try {
        principal = await oidc.finish(callback);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        await recordFailure(context, request, 'signin.failed', {
          via: 'oidc',
          reason: message.slice(0, 300),
        });
        return refusal(reply, message);
      }
      const id = await signIn(context, request, principal, 'oidc');
      return reply
        .status(303)
        .header('set-cookie', cookie(request, id))
        .header('location', '/console/')
        .send();
    },
  );

  app.post(
    '/v1/session/logout',
    { schema: { summary: 'Sign out: the session ends' } },
    async (request, reply) => {
      await sessions.end(cookieValue(request.headers.cookie, SESSION_COOKIE));
      return reply.header('set-cookie', cookie(request, undefined)).status(204).send();
    },
  );
}

function refusal(reply: FastifyReply, message: string): FastifyReply {
  return reply
    .status(401)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>porter: sign-in refused</title></head>` +
        `<body><h1>Sign-in refused</h1><p role="alert">${escapeHtml(message)}</p><p><a href="/console/">Back to the console</a></p></body></html>`,
    );
}
