/**
 * The routes an operator uses rather than a client: health checks, metrics and the queue
 * dashboard. `opsRoutes` adds them to the API; `buildOpsApp` serves the first two on a worker.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import { watchContext } from '../../app/observability.js';
import { ReadinessProbe } from '../../app/readiness.js';
import { PrometheusMetrics } from '../../metrics/prometheus.js';
import { errorHandler, notFoundHandler } from '../error-handler.js';
import { healthRoutes } from './health.js';
import { metricsRoutes } from './metrics.js';
import { queueBoardRoutes } from './queues.js';

export interface OpsRoutesOptions {
  context: PorterContext;
  /** The API token; the queue dashboard's session cookie stands for it. */
  token: string;
  /**
   * The registry /metrics answers from. @defaultValue the context's metrics when they are
   * Prometheus metrics, else a new registry with the scrape-time figures only
   */
  metrics?: PrometheusMetrics;
}

function metricsOf(context: PorterContext, given?: PrometheusMetrics): PrometheusMetrics {
  const metrics =
    given ??
    (context.metrics instanceof PrometheusMetrics
      ? context.metrics
      : new PrometheusMetrics({ defaultMetrics: false }));
  return watchContext(metrics, context);
}

/** /healthz, /readyz, /metrics and /queues on the API. */
export async function opsRoutes(app: FastifyInstance, options: OpsRoutesOptions): Promise<void> {
  const { context } = options;
  const probe = new ReadinessProbe(context);
  app.addHook('onClose', async () => probe.close());
  await app.register(healthRoutes, { probe });
  await app.register(metricsRoutes, {
    metrics: metricsOf(context, options.metrics),
    requireToken: context.env.PORTER_METRICS_AUTH === 'token',
  });
  await app.register(queueBoardRoutes, {
    queues: [context.importQueue, context.exportQueue],
    token: options.token,
    readOnly: context.env.PORTER_QUEUES_READ_ONLY,
  });
}

/**
 * A worker's small HTTP server: /metrics, /healthz and /readyz, with no token (it listens on
 * PORTER_METRICS_HOST, 127.0.0.1 unless set: keep it off public networks).
 */
export async function buildOpsApp(options: {
  context: PorterContext;
  metrics?: PrometheusMetrics;
}): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  const probe = new ReadinessProbe(options.context);
  app.addHook('onClose', async () => probe.close());
  await app.register(healthRoutes, { probe });
  await app.register(metricsRoutes, {
    metrics: metricsOf(options.context, options.metrics),
    requireToken: false,
  });
  return app;
}
