/** The metrics and readiness of a porter process, wired to its context. */
import type { MetricSources, PrometheusMetrics } from '../metrics/prometheus.js';
import type { PorterContext } from './context.js';

/** What a scrape reads from Redis: the queues' depths and the imports' and exports' states. */
export function metricSourcesOf(context: PorterContext): MetricSources {
  return {
    queues: [context.importQueue, context.exportQueue],
    imports: context.store,
    exports: context.exportStore,
  };
}

/** Makes the metrics read this context's queues and stores when scraped. */
export function watchContext(
  metrics: PrometheusMetrics,
  context: PorterContext,
): PrometheusMetrics {
  metrics.watch(metricSourcesOf(context));
  return metrics;
}
