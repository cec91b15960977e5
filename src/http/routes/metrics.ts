/** /metrics: the process's metrics in the Prometheus text format. */
import type { FastifyInstance } from 'fastify';
import type { PrometheusMetrics } from '../../metrics/prometheus.js';

export interface MetricsRoutesOptions {
  metrics: PrometheusMetrics;
  /** Whether a scrape needs the API token. @defaultValue true */
  requireToken?: boolean;
}

export async function metricsRoutes(
  app: FastifyInstance,
  options: MetricsRoutesOptions,
): Promise<void> {
  const open = options.requireToken === false;
  app.get(
    '/metrics',
    {
      config: { access: open ? 'public' : 'token' },
      schema: {
        summary: `Metrics in the Prometheus text format (${open ? 'no token needed' : 'needs the token'})`,
        ...(open ? { security: [] } : {}),
      },
    },
    async (_request, reply) => {
      const { contentType, text } = await options.metrics.scrape();
      return reply.header('cache-control', 'no-store').type(contentType).send(text);
    },
  );
}
