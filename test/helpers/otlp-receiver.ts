/**
 * A real OTLP/HTTP receiver on a free port: takes `POST /v1/traces` and keeps every span it was
 * sent in the JSON protocol (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), flattened; of a protobuf
 * body it keeps the content type and size only.
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { loadEnv } from '../../src/config/env.js';
import { startTracing } from '../../src/observability/tracing.js';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
  attributes: Record<string, unknown>;
  status?: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The collector's base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** The content type and body size of every POST /v1/traces. */
  posts: { contentType: string; bytes: number }[];
  /** Requests received, whatever their path. */
  requests(): number;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpBody {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: (Omit<ReceivedSpan, 'attributes' | 'service'> & { attributes?: OtlpAttribute[] })[];
    }[];
  }[];
}

function valueOf(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(list.map((attribute) => [attribute.key, valueOf(attribute.value)]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const posts: OtlpReceiver['posts'] = [];
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const contentType = request.headers['content-type'] ?? '';
      posts.push({ contentType, bytes: raw.length });
      if (!contentType.startsWith('application/json')) {
        response.writeHead(200, { 'content-type': contentType }).end();
        return;
      }
      const body = JSON.parse(raw.toString('utf8')) as OtlpBody;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              service,
              attributes: attributesOf(span.attributes),
              status: span.status,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    posts,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A receiver, and tracing in this process sending to it in the JSON protocol (the first start
 * wins in a process); `warnings` collects what tracing warns of.
 */
export async function startTracingToReceiver(
  env: Record<string, string> = {},
): Promise<{ otlp: OtlpReceiver; warnings: string[] }> {
  const otlp = await startOtlpReceiver();
  const warnings: string[] = [];
  await startTracing(
    loadEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      ...env,
    }),
    { warn: (message) => warnings.push(message) },
  );
  return { otlp, warnings };
}
