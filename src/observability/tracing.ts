/**
 * Tracing of porter's work with OpenTelemetry: an import from its upload to its last admin call,
 * across the processes its jobs reach. Off unless the OTEL_* variables ask for it
 * (src/observability/tracing-config.ts). Only then are the OpenTelemetry API and SDK loaded;
 * while off, every helper here calls its function straight away.
 *
 * Spans are few: one per upload, job, batch and admin call, never one per record.
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Telemetry } from 'bullmq';
import type { Env } from '../config/env.js';
import { PORTER_VERSION } from '../version.js';
import { tracingConfig } from './tracing-config.js';
import type { RunningSdk, SdkLog } from './tracing-sdk.js';
import { workEntries, type WorkIds } from './work-ids.js';

export { WORK_ATTRIBUTES, type WorkIds } from './work-ids.js';

/** What porter's code says to a span while it runs. */
export interface WorkSpan {
  setAttribute(name: string, value: string | number | boolean): void;
  setAttributes(attributes: Record<string, string | number | boolean>): void;
  addEvent(name: string): void;
}

export interface SpanOptions {
  /** @defaultValue 'internal' */
  kind?: 'internal' | 'client';
  attributes?: Record<string, string | number | boolean>;
}

interface Tracing {
  api: typeof OtelApi;
  tracer: OtelApi.Tracer;
  sdk: RunningSdk;
  log: SdkLog;
}

let tracing: Tracing | undefined;
let starting: Promise<void> | undefined;

/** The span handed to a function while tracing is off: it keeps nothing. */
const NO_SPAN: WorkSpan = {
  setAttribute: () => {},
  setAttributes: () => {},
  addEvent: () => {},
};

/**
 * Starts tracing in this process when the environment asks for it; once per process (the first
 * environment wins). `log` hears of spans that could not be sent.
 */
export function startTracing(env: Env, log: SdkLog): Promise<void> {
  starting ??= (async () => {
    const config = tracingConfig(env);
    if (!config) return;
    const [api, { startSdk }] = await Promise.all([
      import('@opentelemetry/api'),
      import('./tracing-sdk.js'),
    ]);
    const sdk = await startSdk(config, log);
    tracing = { api, sdk, log, tracer: api.trace.getTracer('porter', PORTER_VERSION) };
  })();
  return starting;
}

/**
 * Sends the spans ended so far (before a process exits), trying for up to the exporter's timeout
 * (OTEL_EXPORTER_OTLP_TIMEOUT); never throws, and says in the log when they could not be sent.
 */
export async function flushTracing(): Promise<void> {
  if (!tracing) return;
  const { log } = tracing;
  await tracing.sdk.flush().catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    log.warn(`tracing: spans not sent: ${reason}`);
  });
}

/** Whether this process traces. */
export function tracingOn(): boolean {
  return tracing !== undefined;
}

/** BullMQ's `telemetry` option: its spans, and the trace carried from producer to worker. */
export function queueTelemetry(): Telemetry | undefined {
  return tracing?.sdk.telemetry;
}

/**
 * Runs `run` as the work of these ids: every span started under it, here and in the workers its
 * jobs reach, carries them as attributes (`porter.import.id`, `porter.target`, …).
 */
export function withWork<T>(ids: WorkIds, run: () => T): T {
  if (!tracing) return run();
  const { context, propagation } = tracing.api;
  const active = context.active();
  let baggage = propagation.getBaggage(active) ?? propagation.createBaggage();
  for (const [name, value] of workEntries(ids)) baggage = baggage.setEntry(name, { value });
  return context.with(propagation.setBaggage(active, baggage), run);
}

/**
 * Runs `run` in a new span, the current one's child; the span ends with it, marked failed
 * when it throws.
 */
export function withSpan<T>(
  name: string,
  options: SpanOptions,
  run: (span: WorkSpan) => Promise<T>,
): Promise<T> {
  if (!tracing) return run(NO_SPAN);
  const { api, tracer } = tracing;
  return tracer.startActiveSpan(name, spanOptions(api, options), async (span) => {
    try {
      return await run(span);
    } catch (error) {
      failSpan(api, span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A span that cannot live inside one function (a stream read by its consumer). */
export interface OpenSpan extends WorkSpan {
  /** Ends the span, failed when `error` is given. */
  end(error?: unknown): void;
}

/** Starts a span under the current one; the caller ends it. */
export function startSpan(name: string, options: SpanOptions): OpenSpan {
  if (!tracing) return { ...NO_SPAN, end: () => {} };
  const { api, tracer } = tracing;
  const span = tracer.startSpan(name, spanOptions(api, options));
  return {
    setAttribute: (key, value) => span.setAttribute(key, value),
    setAttributes: (attributes) => span.setAttributes(attributes),
    addEvent: (event) => span.addEvent(event),
    end: (error) => {
      if (error !== undefined) failSpan(api, span, error);
      span.end();
    },
  };
}

function spanOptions(api: typeof OtelApi, options: SpanOptions): OtelApi.SpanOptions {
  const kind = options.kind === 'client' ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
  return { kind, attributes: options.attributes };
}

function failSpan(api: typeof OtelApi, span: OtelApi.Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: api.SpanStatusCode.ERROR, message });
}
