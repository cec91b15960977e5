import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { closeWithin } from '../../src/http/close-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';

const TOKEN = 'graceful-token-0123456789';
let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
});
afterAll(async () => {
  await pipeline?.close();
});

describe('stopping the producer API', () => {
  it('stops accepting uploads but finishes the one in progress', async () => {
    const app = await buildApiApp({ context: pipeline.context, token: TOKEN });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const rows = Array.from({ length: 50 }, (_, index) => `closing.${index + 1}\n`);
    let sent = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const body = new ReadableStream({
      async pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('username\n'));
        if (sent === 10) await gate; // the upload is half-way when the API is told to stop
        const next = rows[sent++];
        if (next) controller.enqueue(new TextEncoder().encode(next));
        else controller.close();
      },
    });
    const upload = fetch(`${url}/v1/imports?resource=users&mode=create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
      body,
      duplex: 'half',
    } as RequestInit);
    // the API has begun receiving it: the import exists, still receiving
    await waitFor(async () => {
      const [latest] = await pipeline.context.store.list({ limit: 1 });
      return latest?.state === 'receiving' && sent >= 10 ? true : undefined;
    });
    const closing = app.close();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    release();
    const response = await upload;
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ state: 'queued', total: 50 });
    await closing;
  });

  it('cuts an upload still in progress at the shutdown timeout: its import ends failed, nothing sent', async () => {
    const app = await buildApiApp({ context: pipeline.context, token: TOKEN });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const queuedBefore = await pipeline.context.importQueue.count();
    let started = false;
    const body = new ReadableStream({
      async pull(controller) {
        if (!started) {
          started = true;
          controller.enqueue(new TextEncoder().encode('username\nstalled.1\n'));
          return;
        }
        await new Promise(() => {}); // a client that never sends the rest
      },
    });
    const upload = fetch(`${url}/v1/imports?resource=users&mode=create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
      body,
      duplex: 'half',
    } as RequestInit).catch((error: unknown) => error);
    const receiving = await waitFor(async () => {
      const [latest] = await pipeline.context.store.list({ limit: 1 });
      return latest?.state === 'receiving' && latest.source === undefined ? latest : undefined;
    });
    await closeWithin(app, 200);
    await upload;
    const info = await waitFor(async () => {
      const current = await pipeline.context.store.get(receiving.id);
      return current?.state === 'failed' ? current : undefined;
    });
    expect(info.reason).toBeTruthy();
    expect(await pipeline.context.importQueue.count()).toBe(queuedBefore);
  });
});
