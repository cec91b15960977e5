/**
 * OTEL_TRACES_EXPORTER=console: each span as one JSON line on stderr, beside porter's logs
 * (stdout stays the commands' output).
 */
import { ExportResultCode, hrTimeToMilliseconds, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

export class StderrSpanExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const lines = spans.map((span) => JSON.stringify(spanLine(span)) + '\n').join('');
    process.stderr.write(lines, () => done({ code: ExportResultCode.SUCCESS }));
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function spanLine(span: ReadableSpan): Record<string, unknown> {
  const { traceId, spanId } = span.spanContext();
  return {
    span: span.name,
    traceId,
    spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    kind: span.kind,
    service: span.resource.attributes['service.name'],
    start: new Date(hrTimeToMilliseconds(span.startTime)).toISOString(),
    durationMs: Math.round(hrTimeToMilliseconds(span.duration) * 1000) / 1000,
    status: span.status.code,
    ...(span.status.message ? { error: span.status.message } : {}),
    attributes: span.attributes,
  };
}
