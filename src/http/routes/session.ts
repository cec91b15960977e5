/**
 * /v1/session: who the caller is, and the console's sign-in with OpenID Connect. Starting a
 * sign-in sets a short pre-sign-in cookie (its state, nonce and PKCE verifier) on the browser that
 * asked, and only that browser's callback is taken; the callback makes a session
 * (src/auth/sessions.ts) whose id goes in an HttpOnly cookie; the console reads its CSRF token
 * from GET /v1/session and sends it with each change. Sign-out deletes the session.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import { oidcOf, securityOf } from '../../app/security.js';
import { PENDING_SECONDS } from '../../auth/oidc.js';
import { PorterError } from '../../errors/porter-error.js';
import { SESSION_COOKIE } from '../access-control.js';
import { checkFailureLimit, recordFailure, signIn } from '../sign-ins.js';
import { auditSignOut } from '../audit-hooks.js';
import { cookieValue, sessionCookie } from '../board-session.js';
import { actorOf } from '../request-actor.js';

/** The cookie holding a sign-in in progress; it is sent to the callback's path only. */
export const PENDING_COOKIE = 'porter_oidc';
const CALLBACK_PATH = '/v1/session/callback';

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
  const oidc = oidcOf(context);
  const cookie = (request: FastifyRequest, value: string | undefined): string =>
    sessionCookie(SESSION_COOKIE, value, {
      secure: request.protocol === 'https',
      path: '/',
      maxAgeSeconds: sessions.ttlSeconds,
      // the callback arrives from the provider's site: Lax lets the console's first page see it;
      // every change also needs the session's CSRF header
      sameSite: 'Lax',
    });
  // the sign-in in progress, on the browser that started it; sent back to the callback only
  const pendingCookie = (request: FastifyRequest, value: string | undefined): string =>
    sessionCookie(PENDING_COOKIE, value, {
      secure: request.protocol === 'https',
      path: oidc ? new URL(oidc.settings.redirectUrl).pathname : CALLBACK_PATH,
      maxAgeSeconds: PENDING_SECONDS,
      // the provider's redirect is a top-level navigation from its site: Lax lets it through
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
        ...(principal.display ? { display: principal.display } : {}),
        ...(principal.targets ? { targets: principal.targets } : {}),
        ...(session && !request.headers.authorization ? { csrf: session.csrf } : {}),
      };
    },
  );

  app.get(
    '/v1/session/oidc',
    { config: { access: 'public' }, schema: hidden },
    async (request, reply) => {
      if (!oidc)
        throw new PorterError(
          'PORTER_NOT_FOUND',
          'no OpenID Connect sign-in configured (PORTER_OIDC_ISSUER)',
        );
      // nothing is stored for an anonymous caller: the sign-in waits in its own browser's cookie
      const { url, pending } = await oidc.start();
      return reply
        .header('cache-control', 'no-store')
        .header('set-cookie', pendingCookie(request, pending))
        .redirect(url.href);
    },
  );

  app.get(
    '/v1/session/callback',
    // the provider writes the query (code, state, iss, and what else it adds): openid-client checks it
    { config: { access: 'public', foreignQuery: true }, schema: hidden },
    async (request, reply) => {
      if (!oidc)
        throw new PorterError(
          'PORTER_NOT_FOUND',
          'no OpenID Connect sign-in configured (PORTER_OIDC_ISSUER)',
        );
      await checkFailureLimit(context, request);
      const callback = new URL(request.url, oidc.settings.redirectUrl);
      // the sign-in is over either way: its cookie goes
      const clearPending = pendingCookie(request, undefined);
      let signedIn;
      try {
        signedIn = await oidc.finish(callback, cookieValue(request.headers.cookie, PENDING_COOKIE));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        await recordFailure(context, request, 'signin.failed', {
          via: 'oidc',
          reason: message.slice(0, 300),
        });
        return refusal(reply.header('set-cookie', clearPending), message);
      }
      const id = await signIn(context, request, signedIn.principal, 'oidc', {
        oidc: signedIn.grant,
      });
      return reply
        .status(303)
        .header('set-cookie', [cookie(request, id), clearPending])
        .header('location', '/console/')
        .send();
    },
  );

  app.post(
    '/v1/session/logout',
    { schema: { summary: 'Sign out: the session ends' } },
    async (request, reply) => {
      const id = cookieValue(request.headers.cookie, SESSION_COOKIE);
      const session = await sessions.get(id);
      await sessions.end(id);
      // a bearer token has no session to end: no sign-out to record
      if (session) await auditSignOut(context, request, session.principal);
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
