import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

const TOKEN = 'test-token-0123456789abcdef';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN, maxUploadBytes: 64 * 1024 });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

const auth = { authorization: `Bearer ${TOKEN}` };

async function finalState(id: string): Promise<{ state: string; counts: Record<string, number> }> {
  const info = await pipeline.waitFinal(id);
  return { state: info.state, counts: info.counts };
}

describe('producer HTTP API', () => {
  it('the health check needs no token; every other route does', async () => {
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
    // a query it does not take is refused as such, not as a missing token
    expect((await fetch(`${baseUrl}/healthz?probe=1`)).status).toBe(400);
    const noToken = await fetch(`${baseUrl}/v1/imports`);
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ error: { code: 'PORTER_UNAUTHORIZED' } });
    const wrongToken = await fetch(`${baseUrl}/v1/imports`, {
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrongToken.status).toBe(401);
    expect((await fetch(`${baseUrl}/docs/json`)).status).toBe(401);
  });

  it('a raw CSV body with options as query parameters answers 202 with the id and links', async () => {
    const body = csv(
      ['username', 'email'],
      [
        ['api.one', 'one@example.com'],
        ['api.two', 'two@example.com'],
      ],
    );
    const response = await fetch(`${baseUrl}/v1/imports?resource=users&mode=create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body,
    });
    expect(response.status).toBe(202);
    const created = (await response.json()) as {
      id: string;
      state: string;
      total: number;
      links: Record<string, string>;
    };
    expect(created).toMatchObject({ state: 'queued', total: 2 });
    expect(created.links.self).toBe(`/v1/imports/${created.id}`);
    expect(await finalState(created.id)).toMatchObject({
      state: 'completed',
      counts: { succeeded: 2 },
    });

    const status = await fetch(`${baseUrl}${created.links.self}`, { headers: auth });
    expect(await status.json()).toMatchObject({
      id: created.id,
      state: 'completed',
      done: 2,
      total: 2,
      progress: { percent: 100 },
      calls: { writeCalls: 1 },
    });

    const results = await fetch(`${baseUrl}${created.links.results}?format=json`, {
      headers: auth,
    });
    expect(results.headers.get('content-type')).toMatch(/application\/json/);
    const parsed = (await results.json()) as { key: string; status: string }[];
    expect(parsed.map((r) => [r.key, r.status])).toEqual([
      ['api.one', 'succeeded'],
      ['api.two', 'succeeded'],
    ]);
    const csvReport = await fetch(`${baseUrl}${created.links.results}?format=csv&status=failed`, {
      headers: auth,
    });
    expect(csvReport.headers.get('content-type')).toMatch(/text\/csv/);
    expect((await csvReport.text()).trim().split('\n')).toHaveLength(1); // header only
  });

  it('a multipart upload with option fields before the file', async () => {
    const form = new FormData();
    form.append('resource', 'groups');
    form.append('mode', 'upsert');
    form.append(
      'file',
      new Blob(['{"name":"API Group","priority":3}\n'], { type: 'application/x-ndjson' }),
      'groups.ndjson',
    );
    const response = await fetch(`${baseUrl}/v1/imports`, {
      method: 'POST',
      headers: auth,
      body: form,
    });
    expect(response.status).toBe(202);
    const created = (await response.json()) as { id: string };
    expect(await finalState(created.id)).toMatchObject({ state: 'completed' });
    expect(
      pipeline.sandbox.store.groups().find((group) => group.name === 'API Group'),
    ).toMatchObject({ priority: 3 });
  });

  it('a JSON array body is streamed, not parsed by the server', async () => {
    const response = await fetch(`${baseUrl}/v1/imports?resource=users&mode=upsert`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify([{ username: 'api.json', city: 'Lisbon' }]),
    });
    expect(response.status).toBe(202);
    const created = (await response.json()) as { id: string };
    expect(await finalState(created.id)).toMatchObject({ state: 'completed' });
  });

  it('bad options are refused naming the field', async () => {
    const response = await fetch(`${baseUrl}/v1/imports?resource=robots&mode=create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body: 'username\nx\n',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 'PORTER_USAGE', message: expect.stringMatching(/^resource/) },
    });
  });

  it('an upload over the size limit gets 413 (declared length, and streamed without a length)', async () => {
    const big = 'username\n' + 'x'.repeat(70 * 1024) + '\n';
    const declared = await fetch(`${baseUrl}/v1/imports?resource=users&mode=create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ error: { code: 'PORTER_UPLOAD_TOO_LARGE' } });

    const chunks = [
      Buffer.from('username\n'),
      ...Array.from({ length: 80 }, (_, index) =>
        Buffer.from(`user${index}${'y'.repeat(1_000)}\n`),
      ),
    ];
    const streamed = await fetch(`${baseUrl}/v1/imports?resource=users&mode=create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body: new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);

    const form = new FormData();
    form.append('resource', 'users');
    form.append('mode', 'create');
    form.append('file', new Blob([big], { type: 'text/csv' }), 'big.csv');
    const multipart = await fetch(`${baseUrl}/v1/imports`, {
      method: 'POST',
      headers: auth,
      body: form,
    });
    expect(multipart.status).toBe(413);
  });

  it('a multipart file just under the limit is taken, though its envelope is over it', async () => {
    let text = 'username\n';
    for (let index = 0; text.length < 64 * 1024 - 40; index++) text += `near.${index}\n`;
    const form = new FormData();
    form.append('resource', 'users');
    form.append('mode', 'create');
    form.append('file', new Blob([text], { type: 'text/csv' }), 'near.csv');
    const response = await fetch(`${baseUrl}/v1/imports`, {
      method: 'POST',
      headers: auth,
      body: form,
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    expect((await finalState(id)).state).toBe('completed');
  });

  it('an upload of a type porter does not read gets 415', async () => {
    const response = await fetch(`${baseUrl}/v1/imports?resource=users&mode=create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: 'username\nx\n',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({
      error: { code: 'PORTER_UNSUPPORTED_MEDIA_TYPE' },
    });
  });

  it('DELETE cancels; an unknown id is 404', async () => {
    const missing = await fetch(`${baseUrl}/v1/imports/imp_nope`, { headers: auth });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'PORTER_NOT_FOUND' } });
    const list = await fetch(`${baseUrl}/v1/imports`, { headers: auth });
    const imports = (await list.json()) as { id: string; state: string }[];
    const finished = imports.find((item) => item.state === 'completed');
    const again = await fetch(`${baseUrl}/v1/imports/${finished!.id}`, {
      method: 'DELETE',
      headers: auth,
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: 'PORTER_CONFLICT' } });
  });

  it('POST /v1/imports/:id/retry starts a new import of the records a retry can mend, and counts the others', async () => {
    const response = await fetch(`${baseUrl}/v1/imports?resource=users&mode=create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body: 'username,email,groups\napi.retry,r@example.com,API Later\n,missing@example.com,\n',
    });
    const created = (await response.json()) as { id: string };
    await pipeline.waitFinal(created.id);
    const client = pipeline.context.createAdminClient();
    await client.postGroups([{ name: 'API Later' }]);
    await client.close();

    // what a retry would send, and what it leaves out: the row with no username fails again
    const preview = await fetch(`${baseUrl}/v1/imports/${created.id}/retry?status=failed`, {
      headers: auth,
    });
    expect(await preview.json()).toEqual({
      retryable: 1,
      leftOut: { total: 1, byCode: { PORTER_ROW_INVALID: 1 } },
    });
    const retry = await fetch(`${baseUrl}/v1/imports/${created.id}/retry?status=failed`, {
      method: 'POST',
      headers: auth,
    });
    expect(retry.status).toBe(202);
    const retried = (await retry.json()) as { id: string; retryOf: string; total: number };
    expect(retried).toMatchObject({
      retryOf: created.id,
      total: 1,
      leftOut: { total: 1, byCode: { PORTER_ROW_INVALID: 1 } },
    });
    await pipeline.waitFinal(retried.id);
    const results = await pipeline.results(retried.id);
    expect(results).toEqual([
      expect.objectContaining({ sourceRow: 1, key: 'api.retry', status: 'succeeded' }),
    ]);

    // nothing a retry can mend: refused, with the reason
    const invalidOnly = await fetch(`${baseUrl}/v1/imports?resource=users&mode=create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body: 'username,email\n,missing@example.com\n',
    });
    const invalid = (await invalidOnly.json()) as { id: string };
    await pipeline.waitFinal(invalid.id);
    const again = await fetch(`${baseUrl}/v1/imports/${invalid.id}/retry`, {
      method: 'POST',
      headers: auth,
    });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({
      error: {
        code: 'PORTER_INPUT_EMPTY',
        message: expect.stringContaining('1 PORTER_ROW_INVALID'),
      },
    });
  });

  it('serves an OpenAPI document describing the routes', async () => {
    const response = await fetch(`${baseUrl}/docs/json`, { headers: auth });
    const document = (await response.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/v1/imports', '/v1/imports/{id}', '/v1/imports/{id}/results']),
    );
  });
});
