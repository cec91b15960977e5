/**
 * What the API lets out: no query value but the known options in its log, no stack trace in
 * any error answer, and one file per multipart upload.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { redactUrl, redactUrlsInText } from '../../src/http/log-redaction.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const TOKEN = 'test-token-0123456789abcdef';
const SECRET = 'hunter2-s3cret-value';
const auth = { authorization: `Bearer ${TOKEN}` };

let pipeline: Pipeline;
let app: FastifyInstance;
const logLines: string[] = [];

beforeAll(async () => {
  pipeline = await startPipeline({ env: { LOG_LEVEL: 'info' } });
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  app = await buildApiApp({
    context: pipeline.context,
    token: TOKEN,
    maxUploadBytes: 64 * 1024,
    logger: true,
    logStream,
  });
  // a route that fails the way a bug would, with a URL in its message
  app.get(
    '/v1/test-failure',
    { schema: { querystring: { type: 'object', properties: { token: { type: 'string' } } } } },
    async () => {
      throw new Error(`upstream http://example.test/x?apikey=${SECRET} broke`);
    },
  );
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

/** A multipart body, written out by hand so the test controls every part. */
function multipart(parts: { name: string; value: string; filename?: string }[]) {
  const boundary = 'porter-test-boundary';
  const body = parts
    .map((part) => {
      const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
      const type = part.filename ? 'Content-Type: text/csv\r\n' : '';
      return `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n${part.value}\r\n`;
    })
    .join('');
  return {
    payload: `${body}--${boundary}--\r\n`,
    headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

describe('the log', () => {
  it('redacts every query value but the known options', () => {
    expect(redactUrl(`/v1/imports?token=${SECRET}&format=json&status=failed`)).toBe(
      '/v1/imports?token=[redacted]&format=json&status=failed',
    );
    expect(redactUrl('/v1/imports?resource=users&mode=create&mapping=%7B%7D&flag')).toBe(
      '/v1/imports?resource=users&mode=create&mapping=[redacted]&flag',
    );
    expect(redactUrl('/healthz')).toBe('/healthz');
    expect(redactUrlsInText(`GET /v1/x?password=${SECRET} failed; why? no idea`)).toBe(
      'GET /v1/x?password=[redacted] failed; why? no idea',
    );
  });

  it('never carries a token sent in the query string, refused or not', async () => {
    logLines.length = 0;
    const refused = await app.inject({ method: 'GET', url: `/v1/imports?token=${SECRET}` });
    expect(refused.statusCode).toBe(401);
    // a field the route does not take is refused by its name, never its value
    const unknownField = await app.inject({
      method: 'GET',
      url: `/v1/imports?limit=5&access_token=${SECRET}`,
      headers: auth,
    });
    expect(unknownField.statusCode).toBe(400);
    expect(unknownField.json()).toMatchObject({
      error: { code: 'PORTER_USAGE', details: { field: 'access_token' } },
    });
    expect(unknownField.body).not.toContain(SECRET);
    const unknown = await app.inject({
      method: 'GET',
      url: `/v1/no-such-route?password=${SECRET}`,
      headers: auth,
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: { code: 'PORTER_NOT_FOUND' } });
    expect(unknown.body).not.toContain(SECRET);
    const failed = await app.inject({
      method: 'GET',
      url: `/v1/test-failure?token=${SECRET}`,
      headers: auth,
    });
    expect(failed.statusCode).toBe(500);

    const log = logLines.join('\n');
    expect(logLines.length).toBeGreaterThan(4);
    expect(log).not.toContain(SECRET);
    const urls = logLines
      .map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url)
      .filter(Boolean);
    expect(urls).toContain('/v1/imports?token=[redacted]');
    expect(urls).toContain('/v1/imports?limit=[redacted]&access_token=[redacted]');
    expect(log).toMatch(/upstream http:\/\/example\.test\/x\?apikey=\[redacted\] broke/);
  });
});

describe('error answers', () => {
  it('carry code, message and details, never a stack trace', async () => {
    const answers = await Promise.all([
      app.inject({ method: 'GET', url: '/v1/imports' }),
      app.inject({ method: 'GET', url: '/v1/imports/imp_nope', headers: auth }),
      app.inject({ method: 'GET', url: '/v1/nothing-here', headers: auth }),
      app.inject({ method: 'GET', url: '/v1/test-failure', headers: auth }),
      app.inject({
        method: 'POST',
        url: '/v1/imports?resource=robots&mode=create',
        headers: { ...auth, 'content-type': 'text/csv' },
        payload: 'username\nx\n',
      }),
      app.inject({
        method: 'POST',
        url: '/v1/imports?resource=users&mode=create&mapping={not json',
        headers: { ...auth, 'content-type': 'text/csv' },
        payload: 'username\nx\n',
      }),
      app.inject({
        method: 'POST',
        url: '/v1/imports?resource=users&mode=create',
        headers: { ...auth, 'content-type': 'application/octet-stream' },
        payload: 'username\nx\n',
      }),
      app.inject({
        method: 'POST',
        url: '/v1/exports',
        headers: { ...auth, 'content-type': 'application/json' },
        payload: '{"resource":',
      }),
      app.inject({
        method: 'POST',
        url: '/v1/imports?resource=users&mode=create',
        headers: { ...auth, 'content-type': 'text/csv' },
        payload: 'username\n' + 'x'.repeat(70 * 1024),
      }),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([
      401, 404, 404, 500, 400, 400, 415, 400, 413,
    ]);
    for (const answer of answers) {
      const body = answer.json() as { error: Record<string, unknown> };
      expect(Object.keys(body)).toEqual(['error']);
      expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message']);
      expect(answer.body).not.toMatch(/stack|\n\s*at |\bat .*\.(ts|js):\d+/);
    }
    expect(answers[3]!.json()).toEqual({
      error: { code: 'PORTER_INTERNAL', message: 'internal error; see the API log', details: {} },
    });
  });
});

describe('multipart uploads', () => {
  it('more than one file is 400 PORTER_USAGE, and nothing of either file is sent', async () => {
    const request = multipart([
      { name: 'resource', value: 'users' },
      { name: 'mode', value: 'create' },
      { name: 'file', value: 'username\ntwo.files.first\n', filename: 'first.csv' },
      { name: 'file2', value: 'username\ntwo.files.second\n', filename: 'second.csv' },
    ]);
    const response = await app.inject({ method: 'POST', url: '/v1/imports', ...request });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: { code: 'PORTER_USAGE', message: expect.stringMatching(/one file per upload/) },
    });
    const [latest] = await pipeline.context.store.list({ limit: 1 });
    expect(latest).toMatchObject({ state: 'failed', batches: 0 });
    const usernames = pipeline.sandbox.store.users().map((user) => user.username);
    expect(usernames).not.toContain('two.files.first');
    expect(usernames).not.toContain('two.files.second');
  });

  it('one file with allowLookalike is taken, and the option travels with the import', async () => {
    const request = multipart([
      { name: 'resource', value: 'users' },
      { name: 'mode', value: 'create' },
      { name: 'allowLookalike', value: 'true' },
      { name: 'file', value: 'username\none.file\n', filename: 'one.csv' },
    ]);
    const response = await app.inject({ method: 'POST', url: '/v1/imports', ...request });
    expect(response.statusCode).toBe(202);
    const { id } = response.json() as { id: string };
    expect(await pipeline.waitFinal(id)).toMatchObject({
      state: 'completed',
      options: { allowLookalike: true },
    });
    const bad = await app.inject({
      method: 'POST',
      url: '/v1/imports?resource=users&mode=create&allowLookalike=perhaps',
      headers: { ...auth, 'content-type': 'text/csv' },
      payload: 'username\nx\n',
    });
    expect(bad.json()).toMatchObject({
      error: { code: 'PORTER_USAGE', details: { field: 'allowLookalike' } },
    });
  });
});
