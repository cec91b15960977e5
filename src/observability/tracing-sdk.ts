/**
 * The OpenTelemetry SDK of a process that traces: loaded by src/observability/tracing.ts only
 * when tracing is on, so a process that does not trace never loads it.
 */
import { context, diag, DiagLogLevel, propagation, trace, SpanKind } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
} from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  SamplingDecision,
  TracerProvider,
  type Sampler,
  type SamplingResult,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import type { Telemetry } from 'bullmq';
import { BullMQOtel } from 'bullmq-otel';
import { PORTER_VERSION } from '../version.js';
import { StderrSpanExporter } from './stderr-exporter.js';
import type { TracingConfig } from './tracing-config.js';
import { WORK_ATTRIBUTE_NAMES } from './work-ids.js';

export interface RunningSdk {
  /** What BullMQ's Queue, Worker and FlowProducer take as `telemetry`. */
  telemetry: Telemetry;
  /** Sends the spans ended so far. */
  flush(): Promise<void>;
}

/** Where the SDK's own failures (a collector that does not answer) are told. */
export interface SdkLog {
  warn(message: string): void;
}

/** Registers the SDK as this process's tracer provider, context manager and propagator. */
export async function startSdk(config: TracingConfig, log: SdkLog): Promise<RunningSdk> {
  const exporters = await exportersOf(config);
  const say = sayingAtMostEvery(60_000, log);
  diag.setLogger(
    {
      error: say,
      warn: say,
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // the trace and the ids of the work travel with each job (bullmq-otel injects both)
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
  const provider = new TracerProvider({
    resource: resourceOf(config),
    sampler: new ParentBasedSampler({ root: new WorkSampler() }),
    spanProcessors: [
      new WorkAttributes(),
      ...exporters.map(
        (exporter) =>
          new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.sendEveryMs }),
      ),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  return {
    telemetry: new BullMQOtel({ tracerName: 'bullmq' }),
    flush: () => provider.forceFlush(),
  };
}

/**
 * The SDK's complaints, in the log at most once per period: a collector that is down fails
 * every send, and the log says so once a minute, with how many more there were.
 */
function sayingAtMostEvery(periodMs: number, log: SdkLog): (message: string) => void {
  let saidAt = -Infinity;
  let unsaid = 0;
  return (message) => {
    const now = performance.now();
    if (now - saidAt < periodMs) {
      unsaid++;
      return;
    }
    const more = unsaid > 0 ? ` (and ${unsaid} more since the last)` : '';
    log.warn(`tracing: ${message}${more}`);
    saidAt = now;
    unsaid = 0;
  };
}

/** The exporters asked for; the OTLP one of the protocol asked for, loaded alone. */
async function exportersOf(config: TracingConfig): Promise<SpanExporter[]> {
  const exporters: SpanExporter[] = [];
  for (const name of config.exporters) {
    if (name === 'console') {
      exporters.push(new StderrSpanExporter());
      continue;
    }
    const { url, protocol } = config.otlp!;
    // headers, timeout and compression come from OTEL_EXPORTER_OTLP_* as the exporters read them
    const { OTLPTraceExporter } =
      protocol === 'http/json'
        ? await import('@opentelemetry/exporter-trace-otlp-http')
        : await import('@opentelemetry/exporter-trace-otlp-proto');
    exporters.push(new OTLPTraceExporter({ url }));
  }
  return exporters;
}

function resourceOf(config: TracingConfig) {
  return defaultResource()
    .merge(
      resourceFromAttributes({
        'service.name': 'porter',
        'service.version': PORTER_VERSION,
        'process.pid': process.pid,
      }),
    )
    .merge(detectResources({ detectors: [hostDetector, serviceInstanceIdDetector, envDetector] }))
    .merge(
      config.serviceName ? resourceFromAttributes({ 'service.name': config.serviceName }) : null,
    );
}

/** Copies the ids of the work in hand (the baggage porter sets) onto every span as it starts. */
class WorkAttributes implements SpanProcessor {
  onStart(span: Span, parent: Context): void {
    const baggage = propagation.getBaggage(parent);
    if (!baggage) return;
    for (const name of WORK_ATTRIBUTE_NAMES) {
      const entry = baggage.getEntry(name);
      if (entry) span.setAttribute(name, entry.value);
    }
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Starts a trace for porter's work and for jobs queued or run, not for what happens outside
 * them: an idle worker's polls and lock renewals (BullMQ's internal spans with no parent) and
 * admin calls of no import, export or migration (readiness probes, `porter targets check`) are
 * not recorded.
 */
class WorkSampler implements Sampler {
  shouldSample(_context: Context, _traceId: string, name: string, kind: SpanKind): SamplingResult {
    const background =
      (kind === SpanKind.INTERNAL || kind === SpanKind.CLIENT) && !name.startsWith('porter.');
    return {
      decision: background ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED,
    };
  }
  toString(): string {
    return 'WorkSampler';
  }
}
