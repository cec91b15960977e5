/**
 * AdminClient.stream(): records come out as the JSON array arrives, and every answer that is
 * not an array of records fails the same way get() fails it, never as zero records.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { AdminError } from '../../src/admin/errors.js';

type Handler = (
  write: (text: string) => void,
  end: (text?: string) => void,
  destroy: () => void,
) => void;
let handler: Handler = (_write, end) => end('[]');
let server: Server;
let client: AdminClient;

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    handler(
      (text) => response.write(text),
      (text) => response.end(text),
      () => response.socket?.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new AdminClient({ baseUrl: `http://127.0.0.1:${port}`, requestTimeoutMs: 2_000 });
});
afterAll(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

async function streamAll(): Promise<unknown[]> {
  const records: unknown[] = [];
  for await (const record of client.stream('users')) records.push(record);
  return records;
}

async function failure(action: () => Promise<unknown>): Promise<AdminError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof AdminError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('AdminClient.stream', () => {
  it('yields each record as soon as its part of the array has arrived', async () => {
    let release: (() => void) | undefined;
    handler = (write, end) => {
      write('[{"userId":1,"username":"a"},');
      release = () => end('{"userId":2,"username":"b"}]');
    };
    const iterator = client.stream('users')[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toEqual({ userId: 1, username: 'a' });
    release?.();
    expect((await iterator.next()).value).toEqual({ userId: 2, username: 'b' });
    expect((await iterator.next()).done).toBe(true);
  });

  it('reads an empty array and surrounding whitespace', async () => {
    handler = (_write, end) => end(' \n[ ]\n');
    expect(await streamAll()).toEqual([]);
  });

  it.each([
    ['an empty body', '', 'ADMIN_BAD_RESPONSE'],
    ['a lone number', '5', 'ADMIN_BAD_RESPONSE'],
    ['null', 'null', 'ADMIN_BAD_RESPONSE'],
    ['a string', '"x"', 'ADMIN_BAD_RESPONSE'],
    ['an object', '{"users":[]}', 'ADMIN_BAD_RESPONSE'],
    ['a truncated array', '[{"userId":1},{"userId"', 'ADMIN_BAD_RESPONSE'],
    ['two arrays', '[][]', 'ADMIN_BAD_RESPONSE'],
    ['a record of the wrong shape', '[{"userId":"one"}]', 'ADMIN_BAD_RESPONSE'],
  ])('fails on %s instead of yielding nothing', async (_label, body, code) => {
    handler = (_write, end) => end(body);
    expect((await failure(streamAll)).code).toBe(code);
  });

  it('an error body under 200 is the server refusing, as get() reads it', async () => {
    handler = (_write, end) => end('{"errorcode":"E42","message":"not allowed"}');
    const streamed = await failure(streamAll);
    const read = await failure(() => client.get('users'));
    expect(streamed.code).toBe('ADMIN_HTTP_ERROR');
    expect(streamed.errorcode).toBe('E42');
    expect(streamed.message).toBe(read.message);
  });

  it('an answer that breaks off mid-array is no answer (retryable), after the records before it', async () => {
    handler = (write, _end, destroy) => {
      write('[{"userId":1},{"userId":2},{"us');
      setTimeout(destroy, 20);
    };
    const seen: unknown[] = [];
    const error = await failure(async () => {
      for await (const record of client.stream('users')) seen.push(record);
    });
    expect(error.code).toBe('ADMIN_NO_ANSWER');
    expect(seen).toEqual([{ userId: 1 }, { userId: 2 }]);
  });

  it('a record of the wrong shape fails the read after the records before it', async () => {
    handler = (_write, end) => end('[{"userId":1},{"username":"b","userId":2},{"userId":"three"}]');
    const seen: unknown[] = [];
    const error = await failure(async () => {
      for await (const record of client.stream('users')) seen.push(record);
    });
    expect(error.code).toBe('ADMIN_BAD_RESPONSE');
    expect(error.message).toMatch(/wrong shape/);
    // the second record's keys were out of order: zod's copy of it, in spec order, comes out
    expect(seen).toEqual([{ userId: 1 }, { userId: 2, username: 'b' }]);
    expect(Object.keys(seen[1] as object)).toEqual(['userId', 'username']);
  });

  it('streamBatches gives the records of each part of the array as one batch', async () => {
    let release: (() => void) | undefined;
    handler = (write, end) => {
      write('[{"userId":1},{"userId":2},{"us');
      release = () => end('erId":3}]');
    };
    const iterator = client.streamBatches('users')[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual([{ userId: 1 }, { userId: 2 }]);
    release?.();
    expect((await iterator.next()).value).toEqual([{ userId: 3 }]);
    expect((await iterator.next()).done).toBe(true);
  });

  it('an abort stops the stream with the abort reason', async () => {
    handler = (write) => write('[{"userId":1},');
    const controller = new AbortController();
    const reason = new Error('stop');
    const read = (async () => {
      for await (const _record of client.stream('users', {}, controller.signal))
        controller.abort(reason);
    })();
    await expect(read).rejects.toBe(reason);
  });
});
