/**
 * The producer's HTTP API. `buildApiApp` is separate from `listen`, so tests use inject().
 * Every route needs `Authorization: Bearer <token>` unless its config says otherwise (access.ts):
 * /healthz and /readyz need none, /metrics as PORTER_METRICS_AUTH says, /queues takes a browser
 * session cookie too. The console's
 * own files are public too.
 */
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import type { PorterContext } from '../app/context.js';
import { PorterError } from '../errors/porter-error.js';
import { PORTER_VERSION } from '../version.js';
import helmet from '@fastify/helmet';
import { registerAccessControl } from './access-control.js';
import { registerAuditHooks } from './audit-hooks.js';
import { registerStrictFields, STRICT_AJV } from './strict-fields.js';
import { auditRoutes } from './routes/audit.js';
import { sessionRoutes } from './routes/session.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { redactingLogOptions } from './log-redaction.js';
import { consoleRoutes } from './routes/console.js';
import { exportRoutes } from './routes/exports.js';
import { importRecordRoutes } from './routes/import-records.js';
import { planApprovalRoutes } from './routes/plan-approval.js';
import { importScheduleRoutes } from './routes/import-schedules.js';
import { importRoutes } from './routes/imports.js';
import { metaRoutes } from './routes/meta.js';
import { targetRoutes } from './routes/targets.js';
import { sourceRoutes } from './routes/sources.js';
import { previewRoutes } from './routes/previews.js';
import { migrationRoutes } from './routes/migrations.js';
import { scheduleRoutes } from './routes/schedules.js';
import { opsRoutes } from './routes/ops.js';
import type { PrometheusMetrics } from '../metrics/prometheus.js';
import { undoRoutes } from './routes/undo.js';
import { notifyRoutes } from './routes/notify.js';
import { canonicalScimUrl, scimRoutes } from './routes/scim.js';

export interface ApiOptions {
  context: PorterContext;
  /**
   * PORTER_API_TOKEN: an admin's bearer token (stored tokens and sessions work besides).
   * Without it only stored tokens and sessions open the API.
   */
  token?: string;
  /** Largest upload accepted, in bytes. @defaultValue PORTER_MAX_UPLOAD_BYTES */
  maxUploadBytes?: number;
  /** Log requests (pino, JSON lines). @defaultValue false */
  logger?: boolean;
  /** Where the log goes when logging. @defaultValue standard output */
  logStream?: NodeJS.WritableStream;
  /** The registry /metrics answers from. @defaultValue the context's, when Prometheus metrics */
  metrics?: PrometheusMetrics;
}

/** PORTER_TRUST_PROXY as fastify takes it: a count of hops becomes the hops it believes. */
function trustedProxies(setting: boolean | number | string): boolean | string | TrustProxyHops {
  if (typeof setting !== 'number') return setting;
  return (_address, hop) => hop < setting;
}

type TrustProxyHops = (address: string, hop: number) => boolean;

export async function buildApiApp(options: ApiOptions): Promise<FastifyInstance> {
  if (options.token !== undefined && options.token.length < 16) {
    throw new PorterError(
      'PORTER_CONFIG_INVALID',
      'PORTER_API_TOKEN: use a token of at least 16 characters',
    );
  }
  const maxUploadBytes = options.maxUploadBytes ?? options.context.env.PORTER_MAX_UPLOAD_BYTES;
  const app = Fastify({
    logger: options.logger
      ? {
          level: options.context.env.LOG_LEVEL,
          redact: ['req.headers.authorization'],
          // no query value but the known options is ever logged: `?token=…` stays out
          ...redactingLogOptions(),
          ...(options.logStream ? { stream: options.logStream } : {}),
        }
      : false,
    bodyLimit: 1024 * 1024,
    // X-Forwarded-For and -Proto count only from the proxies PORTER_TRUST_PROXY names: the
    // client's address (failure limits, the audit) and https (Secure cookies, the origin check)
    trustProxy: trustedProxies(options.context.env.PORTER_TRUST_PROXY),
    // a field a route does not declare is refused, never stripped (strict-fields.ts)
    ajv: STRICT_AJV,
    // SCIM clients spell endpoints in any case (`/users`) and add a slash (`/Users/?filter=`)
    rewriteUrl: (request) => canonicalScimUrl(request.url ?? '/'),
  });
  registerStrictFields(app);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  // once stopping, answers to the requests still in progress close their connection, so the
  // server can finish closing instead of waiting for clients' keep-alive connections
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) void reply.header('connection', 'close');
  });
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'porter API',
        version: PORTER_VERSION,
        description: 'Bulk import/export for the admin interface',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(multipart, { limits: { fileSize: maxUploadBytes + 1, files: 1, fields: 20 } });

  app.get('/docs/json', { schema: { hide: true } }, async () => app.swagger());

  // security headers; the console sets its own Content-Security-Policy (routes/console.ts), and
  // the queue dashboard's pages need their inline styles, so no blanket policy here
  await app.register(helmet, { contentSecurityPolicy: false, crossOriginEmbedderPolicy: false });
  registerAccessControl(app, { context: options.context, token: options.token });
  registerAuditHooks(app, options.context);
  await app.register(sessionRoutes, { context: options.context });
  await app.register(auditRoutes, { context: options.context });
  await app.register(opsRoutes, {
    context: options.context,
    token: options.token,
    metrics: options.metrics,
  });
  await app.register(importRoutes, { context: options.context, maxUploadBytes });
  await app.register(exportRoutes, { context: options.context });
  await app.register(migrationRoutes, { context: options.context, maxUploadBytes });
  await app.register(importScheduleRoutes, { context: options.context });
  await app.register(scheduleRoutes, { context: options.context });
  await app.register(importRecordRoutes, { context: options.context });
  await app.register(previewRoutes, { context: options.context });
  await app.register(metaRoutes, { maxUploadBytes });
  await app.register(targetRoutes, { context: options.context });
  await app.register(sourceRoutes, { context: options.context });
  await app.register(consoleRoutes);
  await app.register(undoRoutes, { context: options.context });
  await app.register(planApprovalRoutes, { context: options.context });
  await app.register(notifyRoutes, { context: options.context });
  await app.register(scimRoutes, { context: options.context });
  return app;
}
