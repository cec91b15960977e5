/**
 * The span of each admin call, from a client in a process that traces: method, URL without
 * credentials, answer status, records, outcome, the target and the work's ids; a refused call's
 * span is marked failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminHttpError } from '../../src/admin/errors.js';
import { flushTracing, tracingOn, withSpan, withWork } from '../../src/observability/tracing.js';
import { startTracingToReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const USER = 'porter';
const PASSWORD = 'span-test-secret-91c2';

let otlp: OtlpReceiver;
let test: TestSandbox;
let warnings: string[];

beforeAll(async () => {
  ({ otlp, warnings } = await startTracingToReceiver({ OTEL_SERVICE_NAME: 'porter-test' }));
  test = await startTestSandbox(
    { user: USER, password: PASSWORD },
    { auth: { user: USER, password: PASSWORD, userPasswordMode: 'params' }, target: 'prod' },
  );
});

afterAll(async () => {
  await test?.close();
  await otlp?.close();
});

describe('the span of an admin call', () => {
  it('says what the call sent and how it was answered, never the credentials', async () => {
    expect(tracingOn()).toBe(true);
    // a call outside any work (a readiness probe, say) starts no trace
    await test.client.listGroups({ name: 'porter-readiness-probe' });
    await withWork({ importId: 'imp_spans' }, () =>
      withSpan('porter.import.batch', {}, async () => {
        await test.client.postUsers([{ username: 'span.one' }, { username: 'span.two' }]);
        // the same names again: refused
        await expect(test.client.postUsers([{ username: 'span.one' }])).rejects.toBeInstanceOf(
          AdminHttpError,
        );
        await test.client.listUsers({ username: 'span.two' });
        let streamed = 0;
        for await (const batch of test.client.streamBatches('users')) streamed += batch.length;
        expect(streamed).toBe(2);
      }),
    );
    await flushTracing();
    expect(otlp.spans.filter((span) => span.name === 'GET groups')).toEqual([]);
    const batch = otlp.spans.find((span) => span.name === 'porter.import.batch')!;

    const url = `${test.url}/wf/restapi/v2/admin/userManager`;
    const common = {
      service: 'porter-test',
      traceId: batch.traceId,
      parentSpanId: batch.spanId,
      kind: 3, // client
      attributes: {
        'url.full': url,
        'porter.resource': 'users',
        'porter.target': 'prod',
        'porter.import.id': 'imp_spans',
      },
    };
    const [written, refused] = otlp.spans.filter((span) => span.name === 'POST users');
    expect(written).toMatchObject(common);
    expect(written!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'porter.records': 2,
      'porter.call.outcome': 'ok',
    });
    expect(refused).toMatchObject(common);
    expect(refused!.attributes).toMatchObject({
      'porter.records': 1,
      'porter.call.outcome': 'refused',
    });
    expect(Number(refused!.attributes['http.response.status_code'])).toBeGreaterThanOrEqual(400);
    expect(refused!.status).toMatchObject({ code: 2 }); // error

    const reads = otlp.spans.filter((span) => span.name === 'GET users');
    expect(reads).toHaveLength(2);
    for (const read of reads) {
      expect(read).toMatchObject(common);
      expect(read.attributes).toMatchObject({
        'http.request.method': 'GET',
        'http.response.status_code': 200,
        'porter.call.outcome': 'ok',
      });
    }
    // a lookup answers one record, the streamed read all of them
    expect(reads.map((read) => read.attributes['porter.records']).sort()).toEqual([1, 2]);
    expect(JSON.stringify(otlp.spans)).not.toContain(PASSWORD);
    expect(warnings).toEqual([]);
  });
});
