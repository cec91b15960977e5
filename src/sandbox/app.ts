/**
 * Assembles one sandbox: store (loaded from the data file, then seeded when empty),
 * faults, auth, persistence, and the fastify app with the admin routes and error answers.
 */
import { fastify, LogController, type FastifyError, type FastifyInstance } from 'fastify';
import { silentLogger } from '../util/logger.js';
import { Authenticator } from './auth.js';
import { SandboxError, type SandboxErrorCode } from './errors.js';
import { Faults } from './faults.js';
import { registerFormParsers } from './form.js';
import { checkSandboxOptions, type SandboxOptions } from './options.js';
import { Persistence } from './persistence.js';
import { registerAdminRoutes } from './routes.js';
import { seedStore } from './seed.js';
import { SandboxStore } from './store.js';

const DEFAULT_BODY_LIMIT = 64 * 1024 * 1024;

/** The parts of a sandbox that outlive one request. */
export interface Sandbox {
  app: FastifyInstance;
  store: SandboxStore;
  faults: Faults;
  persistence: Persistence | undefined;
}

/** Builds a sandbox without listening; `app.close()` flushes and closes the data file. */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  checkSandboxOptions(options);
  const logger = (options.logger ?? silentLogger).child(
    {},
    { serializers: { req: describeRequest } },
  );
  const store = new SandboxStore();
  const persistence = options.dataFile
    ? await Persistence.open(options.dataFile, store, logger, {
        compactJournalBytes: options.compactJournalBytes,
      })
    : undefined;
  const seed = options.seed ?? {};
  const empty = Object.values(store.counts()).every((count) => count === 0);
  const seeding = (seed.users ?? 0) > 0 || (seed.groups ?? 0) > 0;
  if (empty && seeding) {
    const started = performance.now();
    // Seeded records go to the data file as one snapshot, not as a journal entry per record.
    if (persistence) await persistence.fill(() => seedStore(store, seed));
    else seedStore(store, seed);
    logger.info(
      { ...store.counts(), ms: Math.round(performance.now() - started) },
      'sandbox seeded',
    );
  } else if (seeding) {
    logger.info(store.counts(), 'sandbox not seeded: the data file already holds records');
  }
  const faults = new Faults(options.faults ?? {}, store.stats, {
    random: options.random,
    now: options.now,
    sleep: options.sleep,
  });
  const auth = new Authenticator(options);

  const app = fastify({
    loggerInstance: logger,
    // Fastify's request lines would log the query, which may carry apikey or pass: ours do not.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
  }) as unknown as FastifyInstance;
  registerFormParsers(app);
  registerAdminRoutes(app, { store, faults, auth, persistence });
  app.setNotFoundHandler(async (request) => {
    throw new SandboxError('NOT_FOUND', `no such path: ${request.method} ${pathOf(request.url)}`);
  });
  app.setErrorHandler(async (error, request, reply) => {
    const answer = toSandboxError(error);
    if (answer.errorcode === 'INTERNAL')
      request.log.error({ err: error }, 'sandbox request failed');
    return reply
      .code(answer.status)
      .headers(answer.headers)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(answer.toBody()));
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        path: pathOf(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });
  app.addHook('onClose', async () => {
    await persistence?.close();
  });
  return { app, store, faults, persistence };
}

/** The path without its query: queries can carry apikey, user and pass, which are never logged. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

function describeRequest(request: { method?: string; url?: string }): Record<string, unknown> {
  return { method: request.method, path: pathOf(request.url ?? '') };
}

/** Fastify's own errors (body too large, unknown content type, closing) as sandbox errors. */
function toSandboxError(error: unknown): SandboxError {
  if (error instanceof SandboxError) return error;
  const fastifyError = error as Partial<FastifyError>;
  const byStatus: Partial<Record<number, SandboxErrorCode>> = {
    400: 'BAD_REQUEST',
    404: 'NOT_FOUND',
    413: 'TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE',
    503: 'UNAVAILABLE',
  };
  const code =
    fastifyError.statusCode === undefined ? undefined : byStatus[fastifyError.statusCode];
  if (code) {
    const hint =
      code === 'UNSUPPORTED_MEDIA_TYPE'
        ? ': send multipart/form-data or application/x-www-form-urlencoded'
        : '';
    return new SandboxError(code, `${fastifyError.message ?? code}${hint}`);
  }
  return new SandboxError(
    'INTERNAL',
    `internal error: ${(error as Error)?.message ?? String(error)}`,
  );
}
