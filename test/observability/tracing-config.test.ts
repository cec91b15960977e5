/** When porter traces, and where its spans go, from the standard OTEL_* variables. */
import { describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { tracingConfig } from '../../src/observability/tracing-config.js';

const config = (vars: Record<string, string>) => tracingConfig(loadEnv(vars));

describe('the tracing the environment asks for', () => {
  it('is none by default', () => {
    expect(config({})).toBeUndefined();
  });

  it('is on with an OTLP endpoint, sending protobuf to <endpoint>/v1/traces', () => {
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      exporters: ['otlp'],
      otlp: { url: 'http://collector:4318/v1/traces', protocol: 'http/protobuf' },
      serviceName: undefined,
      sendEveryMs: 5000,
    });
  });

  it('takes the traces endpoint and protocol over the general ones', () => {
    expect(
      config({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/otlp/spans',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'porter-worker',
        OTEL_BSP_SCHEDULE_DELAY: '250',
      }),
    ).toEqual({
      exporters: ['otlp'],
      otlp: { url: 'https://traces.example.com/otlp/spans', protocol: 'http/json' },
      serviceName: 'porter-worker',
      sendEveryMs: 250,
    });
  });

  it('is on with OTEL_TRACES_EXPORTER alone: otlp to the standard local collector, console', () => {
    expect(config({ OTEL_TRACES_EXPORTER: 'otlp' })?.otlp?.url).toBe(
      'http://localhost:4318/v1/traces',
    );
    expect(config({ OTEL_TRACES_EXPORTER: 'console' })).toMatchObject({
      exporters: ['console'],
      otlp: undefined,
    });
    expect(
      config({
        OTEL_TRACES_EXPORTER: 'console, OTLP',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      })?.exporters,
    ).toEqual(['console', 'otlp']);
  });

  it.each<Record<string, string>>([
    { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
    { OTEL_TRACES_EXPORTER: 'otlp,none' },
    { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' },
    {
      OTEL_SDK_DISABLED: 'TRUE',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces',
    },
  ])('is off with %o', (vars) => {
    expect(config(vars)).toBeUndefined();
  });

  it.each([
    ['OTEL_TRACES_EXPORTER', 'jaeger'],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'grpc'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'not a url'],
    ['OTEL_SDK_DISABLED', 'yes'],
  ])('a bad %s stops start-up naming the variable', (name, value) => {
    expect(() => loadEnv({ [name]: value })).toThrow(
      expect.objectContaining({
        code: 'PORTER_CONFIG_INVALID',
        message: expect.stringMatching(new RegExp(`^${name}:`)),
      }),
    );
  });
});
