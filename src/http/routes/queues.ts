/**
 * /queues: bull-board, the raw BullMQ view of the import batch and export queues, behind the API
 * token. Scripts send `Authorization: Bearer`; a browser signs in once with the token through a
 * form, which sets a session cookie (board-session.ts). Read-only unless configured otherwise:
 * removing or emptying a batch job by hand would leave its import without results.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { errorHandler as boardErrorHandler } from '@bull-board/api/dist/handlers/error.js';
import { FastifyAdapter } from '@bull-board/fastify';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import type { PorterContext } from '../../app/context.js';
import { securityOf } from '../../app/security.js';
import { isPorterError, PorterError } from '../../errors/porter-error.js';
import { BOARD_PATH } from '../access.js';
import { everyTargetRefusal, scimOnlyRefusal } from '../access-control.js';
import { checkFailureLimit, recordFailure, signIn, tokenPrincipal } from '../sign-ins.js';
import { auditSignOut } from '../audit-hooks.js';
import { BOARD_COOKIE, cookieValue, sessionCookie } from '../board-session.js';
import { loginPage } from '../login-page.js';
import { fieldsSchema } from '../strict-fields.js';
import { boardRouteFields } from './queue-board-fields.js';

export interface QueueBoardOptions {
  /** The queues shown. */
  queues: readonly Queue[];
  context: PorterContext;
  /** PORTER_API_TOKEN, which the form takes as well as the tokens of `porter tokens create`. */
  token?: string;
  /** Hide the buttons that change jobs (retry, remove, clean, pause). @defaultValue true */
  readOnly?: boolean;
}

type BoardServerAdapter = Parameters<typeof createBullBoard>[0]['serverAdapter'];

/** Form fields the sign-in form sends; anything longer is not a token. */
const FORM_BYTES = 4096;

export async function queueBoardRoutes(
  app: FastifyInstance,
  options: QueueBoardOptions,
): Promise<void> {
  // every route of this plugin, the dashboard's among them, opens to the token or the cookie
  // and takes the fields the dashboard's own request schemas name, and no other
  app.addHook('onRoute', (route) => {
    route.config = { access: 'browser', ...route.config };
    const fields = boardRouteFields(route.method, route.url);
    if (!fields) return;
    route.schema = {
      ...route.schema,
      querystring: fieldsSchema(fields.query),
      ...(fields.body ? { body: fieldsSchema(fields.body, { nullable: true }) } : {}),
    };
  });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BYTES },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  const { sessions } = securityOf(options.context);
  const cookie = (request: { protocol: string }, value: string | undefined): string =>
    sessionCookie(BOARD_COOKIE, value, {
      secure: request.protocol === 'https',
      path: BOARD_PATH,
      maxAgeSeconds: sessions.ttlSeconds,
    });

  app.post<{ Body: { token?: unknown } }>(
    `${BOARD_PATH}/login`,
    {
      config: { access: 'public' },
      schema: { hide: true, body: { type: 'object', properties: { token: { type: 'string' } } } },
    },
    async (request, reply) => {
      const given = typeof request.body?.token === 'string' ? request.body.token.trim() : '';
      try {
        await checkFailureLimit(options.context, request, given);
      } catch (error) {
        if (!(error instanceof PorterError)) throw error;
        return reply
          .status(429)
          .type('text/html; charset=utf-8')
          .send(loginPage(`${BOARD_PATH}/login`, error.message));
      }
      const principal = given
        ? await tokenPrincipal(options.context, given, options.token)
        : undefined;
      if (!principal) {
        await recordFailure(options.context, request, 'signin.failed', { via: 'queues' }, given);
        return reply
          .status(401)
          .header('cache-control', 'no-store')
          .type('text/html; charset=utf-8')
          .send(loginPage(`${BOARD_PATH}/login`, 'That is not a porter token.'));
      }
      if (principal.scimOnly) {
        // a SCIM-only token opens the SCIM routes only: no dashboard session for it
        return reply
          .status(403)
          .header('cache-control', 'no-store')
          .type('text/html; charset=utf-8')
          .send(loginPage(`${BOARD_PATH}/login`, scimOnlyRefusal(principal).message));
      }
      if (principal.targets) {
        // the dashboard shows every target's jobs: a limited token gets no session for it
        return reply
          .status(403)
          .header('cache-control', 'no-store')
          .type('text/html; charset=utf-8')
          .send(loginPage(`${BOARD_PATH}/login`, everyTargetRefusal(principal).message));
      }
      const id = await signIn(options.context, request, principal, 'queues', { token: given });
      return reply
        .status(303)
        .header('set-cookie', cookie(request, id))
        .header('location', `${BOARD_PATH}/`)
        .send();
    },
  );

  app.post(`${BOARD_PATH}/logout`, { schema: { hide: true } }, async (request, reply) => {
    const id = cookieValue(request.headers.cookie, BOARD_COOKIE);
    const session = await sessions.get(id);
    await sessions.end(id);
    if (session) await auditSignOut(options.context, request, session.principal);
    return reply
      .status(303)
      .header('set-cookie', cookie(request, undefined))
      .header('location', `${BOARD_PATH}/`)
      .send();
  });

  const adapter = new FastifyAdapter();
  adapter.setBasePath(BOARD_PATH);
  const readOnlyMode = options.readOnly ?? true;
  createBullBoard({
    queues: options.queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode })),
    // @bull-board/fastify brings its own copy of @bull-board/api's types (one patch release
    // apart): the same shape, declared twice
    serverAdapter: adapter as unknown as BoardServerAdapter,
    options: { uiConfig: { boardTitle: 'porter queues' } },
  });
  // bull-board answers a failure with its message (a Redis error, a path, a script's text): the
  // answer says only that it failed and a reference, and the API log has the rest; porter's
  // refusals (a field the route does not take) keep porter's answer
  const logger = options.context.logger.child({ component: 'queues' });
  adapter.setErrorHandler((error: Error & { statusCode?: number }) => {
    if (isPorterError(error)) {
      // the adapter sends any status; the board's type lists only those it uses itself
      return { status: error.httpStatus, body: { error: error.toJSON() } } as ReturnType<
        typeof boardErrorHandler
      >;
    }
    const status = error.statusCode === 400 || error.statusCode === 404 ? error.statusCode : 500;
    const reference = randomUUID();
    logger.error({ err: error, reference, status }, 'queue dashboard request failed');
    return {
      status,
      body: {
        error: { key: 'ERRORS.INTERNAL_SERVER_ERROR' },
        message: `the queue dashboard could not answer; reference ${reference} in the API log`,
        reference,
      },
    };
  });
  await app.register(adapter.registerPlugin(), { prefix: BOARD_PATH });
}
