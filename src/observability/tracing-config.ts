/**
 * Whether this process traces, and where its spans go, from the standard OTEL_* variables.
 * Off unless asked for: OTEL_TRACES_EXPORTER names an exporter, or an OTLP endpoint is set.
 */
import type { Env } from '../config/env.js';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingConfig {
  /** Each gets every span: OTLP/HTTP to `otlp.url`, and JSON lines on stderr for `console`. */
  exporters: ('otlp' | 'console')[];
  otlp?: { url: string; protocol: OtlpProtocol };
  /** `service.name`; undefined: `porter`, unless OTEL_RESOURCE_ATTRIBUTES names one. */
  serviceName?: string;
  /** Milliseconds between two sends of the spans ended meanwhile. */
  sendEveryMs: number;
}

/** Where an OTLP/HTTP collector listens when no endpoint is given (the standard default). */
export const DEFAULT_OTLP_TRACES_URL = 'http://localhost:4318/v1/traces';

type TracingEnv = Pick<
  Env,
  | 'OTEL_SDK_DISABLED'
  | 'OTEL_TRACES_EXPORTER'
  | 'OTEL_EXPORTER_OTLP_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_PROTOCOL'
  | 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
  | 'OTEL_SERVICE_NAME'
  | 'OTEL_BSP_SCHEDULE_DELAY'
>;

/** The tracing this environment asks for; undefined when tracing is off. */
export function tracingConfig(env: TracingEnv): TracingConfig | undefined {
  if (env.OTEL_SDK_DISABLED) return undefined;
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (env.OTEL_EXPORTER_OTLP_ENDPOINT && tracesUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT));
  const named = env.OTEL_TRACES_EXPORTER ?? (url ? ['otlp'] : []);
  // `none` alone, or beside others, sends nothing (the standard's meaning)
  if (named.includes('none')) return undefined;
  const exporters = [...new Set(named)].filter((name) => name !== 'none');
  if (exporters.length === 0) return undefined;
  return {
    exporters,
    otlp: exporters.includes('otlp')
      ? {
          url: url || DEFAULT_OTLP_TRACES_URL,
          protocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL,
        }
      : undefined,
    serviceName: env.OTEL_SERVICE_NAME,
    sendEveryMs: env.OTEL_BSP_SCHEDULE_DELAY,
  };
}

/** The traces URL under a collector's base URL: `<base>/v1/traces`. */
function tracesUrl(base: string): string {
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}
