/**
 * Tracing of porter's work with OpenTelemetry: an import from its upload to its last admin call,
 * across the processes its jobs reach. Off unless the OTEL_* variables ask for it
 * (src/observability/tracing-config.ts); the SDK is loaded only then, and while off every
 * helper here calls its function straight away.
 *
 * Spans are few: one per upload, job, batch and admin call, never one per record.
 */
import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type SpanKind as SpanKindType,
} from '@opentelemetry/api';
import type { Telemetry } from 'bullmq';
import type { Env } from '../config/env.js';
import { PORTER_VERSION } from '../version.js';
import { tracingConfig } from './tracing-config.js';
import type { RunningSdk, SdkLog } from './tracing-sdk.js';
import { workEntries, type WorkIds } from './work-ids.js';

export { WORK_ATTRIBUTES, type WorkIds } from './work-ids.js';
export { SpanKind, type Span } from '@opentelemetry/api';

let sdk: RunningSdk | undefined;
let starting: Promise<void> | undefined;

/** The span handed to a function while tracing is off: it records nothing. */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

const tracer = trace.getTracer('porter', PORTER_VERSION);

/**
 * Starts tracing in this process when the environment asks for it; once per process (the first
 * environment wins). `log` hears of spans that could not be sent.
 */
export function startTracing(env: Env, log: SdkLog): Promise<void> {
  starting ??= (async () => {
    const config = tracingConfig(env);
    if (!config) return;
    const { startSdk } = await import('./tracing-sdk.js');
    sdk = startSdk(config, log);
  })();
  return starting;
}

/** Sends the spans ended so far (before a process exits); never throws. */
export async function flushTracing(): Promise<void> {
  await sdk?.flush().catch(() => undefined);
}

/** Whether this process traces. */
export function tracingOn(): boolean {
  return sdk !== undefined;
}

/** BullMQ's `telemetry` option: its spans, and the trace carried from producer to worker. */
export function queueTelemetry(): Telemetry | undefined {
  return sdk?.telemetry;
}

/**
 * Runs `run` as the work of these ids: every span started under it, here and in the workers its
 * jobs reach, carries them as attributes (`porter.import.id`, `porter.target`, …).
 */
export function withWork<T>(ids: WorkIds, run: () => T): T {
  if (!sdk) return run();
  const active = context.active();
  let baggage = propagation.getBaggage(active) ?? propagation.createBaggage();
  for (const [name, value] of workEntries(ids)) baggage = baggage.setEntry(name, { value });
  return context.with(propagation.setBaggage(active, baggage), run);
}

export interface SpanOptions {
  kind?: SpanKindType;
  attributes?: Attributes;
}

/**
 * Runs `run` in a new span, the current one's child; the span ends with it, marked failed
 * when it throws.
 */
export function withSpan<T>(
  name: string,
  options: SpanOptions,
  run: (span: Span) => Promise<T>,
): Promise<T> {
  if (!sdk) return run(NO_SPAN);
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await run(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * A span for work that cannot run inside one function (a stream read by its consumer); the
 * caller ends it with `endSpan`.
 */
export function startSpan(name: string, options: SpanOptions): Span {
  return sdk ? tracer.startSpan(name, options) : NO_SPAN;
}

/** Ends a span from `startSpan`, failed when `error` is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) failSpan(span, error);
  span.end();
}

function failSpan(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
