/**
 * A multipart upload's option fields count wherever the body was cut on its way: a field before
 * the file part is honoured, one after it is refused (400 PORTER_USAGE naming it, nothing sent),
 * whether the body arrives in one write or in many small TCP writes.
 */
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

const TOKEN = 'field-order-token-0123456789';
const BOUNDARY = 'porter-order-boundary';
let pipeline: Pipeline;
let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  port = Number(new URL(address).port);
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

type Part = { name: string; value: string; filename?: string };

function body(parts: Part[]): Buffer {
  const text = parts
    .map((part) => {
      const file = part.filename ? `; filename="${part.filename}"\r\nContent-Type: text/csv` : '';
      return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"${file}\r\n\r\n${part.value}\r\n`;
    })
    .join('');
  return Buffer.from(`${text}--${BOUNDARY}--\r\n`);
}

/** POST /v1/imports over a socket of its own, the body in pieces of `pieceBytes` (0: whole). */
function upload(payload: Buffer, pieceBytes: number): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', noDelay: true });
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(received).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const answer = text.slice(text.indexOf('\r\n\r\n') + 4);
      resolve({ status, json: JSON.parse(answer) as unknown });
    });
    socket.on('connect', async () => {
      const head =
        'POST /v1/imports HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' +
        `Authorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
        `Content-Length: ${payload.length}\r\n\r\n`;
      const write = (data: Buffer | string): Promise<void> =>
        new Promise((done, failed) =>
          socket.write(data, (error) => (error ? failed(error) : done())),
        );
      await write(head);
      if (pieceBytes === 0) {
        await write(payload);
        return;
      }
      // each piece waits until the last one was handed to the network
      for (let at = 0; at < payload.length; at += pieceBytes) {
        await write(payload.subarray(at, at + pieceBytes));
      }
    });
  });
}

const file = (name: string): Part => ({
  name: 'file',
  value: csv(['username', 'email'], [[name, `${name}@example.com`]]),
  filename: 'people.csv',
});
const options: Part[] = [
  { name: 'resource', value: 'users' },
  { name: 'mode', value: 'upsert' },
];

describe('a multipart upload reads the same fields however it is chunked', () => {
  for (const [label, pieceBytes] of [
    ['in one write', 0],
    ['in 7-byte writes', 7],
  ] as const) {
    it(`dryRun before the file is honoured, ${label}`, async () => {
      const name = `before.${pieceBytes}`;
      const answer = await upload(
        body([...options, { name: 'dryRun', value: 'true' }, file(name)]),
        pieceBytes,
      );
      expect(answer.status).toBe(202);
      const { id } = answer.json as { id: string };
      const info = await pipeline.waitFinal(id);
      expect(info.options.dryRun).toBe(true);
      expect(pipeline.sandbox.store.userByName(name)).toBeUndefined();
    });

    it(`dryRun after the file is refused and nothing is sent, ${label}`, async () => {
      const name = `after.${pieceBytes}`;
      const writes = pipeline.sandbox.store.stats.requests.POST;
      const answer = await upload(
        body([...options, file(name), { name: 'dryRun', value: 'true' }]),
        pieceBytes,
      );
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({
        error: { code: 'PORTER_USAGE', details: { field: 'dryRun' } },
      });
      expect((answer.json as { error: { message: string } }).error.message).toMatch(
        /"dryRun" came after the file part; send every option field before the file/,
      );
      const imports = await pipeline.context.store.list({ limit: 50 });
      for (const info of imports.filter((each) => each.options.dryRun !== true)) {
        expect((await pipeline.waitFinal(info.id)).state).toBe('failed');
      }
      expect(pipeline.sandbox.store.userByName(name)).toBeUndefined();
      expect(pipeline.sandbox.store.stats.requests.POST).toBe(writes);
    });
  }

  it('a field given twice is refused, not settled by which came last', async () => {
    const answer = await upload(
      body([...options, { name: 'mode', value: 'create' }, file('twice.one')]),
      0,
    );
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({
      error: { code: 'PORTER_USAGE', details: { field: 'mode' } },
    });
  });

  it('a preview refuses a field after its file part too', async () => {
    const form = new FormData();
    form.append('resource', 'users');
    form.append('mode', 'upsert');
    form.append('file', new Blob([csv(['username'], [['preview.one']])]), 'people.csv');
    form.append('limit', '1');
    const response = await fetch(`http://127.0.0.1:${port}/v1/previews`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: form,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 'PORTER_USAGE', details: { field: 'limit' } },
    });
  });
});
