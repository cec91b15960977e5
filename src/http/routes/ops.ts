/**
 * The routes an operator uses rather than a client: health checks, metrics and the queue
 * dashboard. `opsRoutes` adds them to the API; build-ops-app.ts serves the first two on a worker.
 */
import type { FastifyInstance } from 'fastify';
import type { PorterContext } from '../../app/context.js';
import { watchContext } from '../../app/observability.js';
import { ReadinessProbe } from '../../app/readiness.js';
import { PrometheusMetrics } from '../../metrics/prometheus.js';
import { healthRoutes } from './health.js';
import { metricsRoutes } from './metrics.js';
import { queueBoardRoutes } from './queues.js';

export interface OpsRoutesOptions {
  context: PorterContext;
  /** PORTER_API_TOKEN; the queue dashboard's form takes it as well as stored tokens. */
  token?: string;
  /**
   * The registry /metrics answers from. @defaultValue the context's metrics when they are
   * Prometheus metrics, else a new registry with the scrape-time figures only
   */
  metrics?: PrometheusMetrics;
}

/** The registry to answer from, reading this context's queues and stores when scraped. */
export function metricsOf(context: PorterContext, given?: PrometheusMetrics): PrometheusMetrics {
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
  // a stopping API says so while it lets uploads in progress finish
  app.addHook('preClose', async () => probe.markStopping());
  app.addHook('onClose', async () => probe.close());
  await app.register(healthRoutes, { probe });
  await app.register(metricsRoutes, {
    metrics: metricsOf(context, options.metrics),
    requireToken: context.env.PORTER_METRICS_AUTH === 'token',
  });
  await app.register(queueBoardRoutes, {
    queues: [context.importQueue, context.exportQueue],
    context,
    token: options.token,
    readOnly: context.env.PORTER_QUEUES_READ_ONLY,
  });
}
