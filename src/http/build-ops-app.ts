/**
 * A worker's small HTTP server: /metrics, /healthz and /readyz, with no token. It listens on
 * PORTER_METRICS_HOST (127.0.0.1 unless set): keep it off public networks.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { PorterContext } from '../app/context.js';
import { ReadinessProbe } from '../app/readiness.js';
import type { PrometheusMetrics } from '../metrics/prometheus.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { healthRoutes } from './routes/health.js';
import { metricsOf } from './routes/ops.js';
import { metricsRoutes } from './routes/metrics.js';

export interface OpsAppOptions {
  context: PorterContext;
  /** @defaultValue the context's metrics when they are Prometheus metrics */
  metrics?: PrometheusMetrics;
  /** The readiness /readyz answers with (closed with the app). @defaultValue a new one */
  probe?: ReadinessProbe;
}

export async function buildOpsApp(options: OpsAppOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  const probe = options.probe ?? new ReadinessProbe(options.context);
  app.addHook('onClose', async () => probe.close());
  await app.register(healthRoutes, { probe });
  await app.register(metricsRoutes, {
    metrics: metricsOf(options.context, options.metrics),
    requireToken: false,
  });
  return app;
}
