import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import {
  AdminBadResponseError,
  AdminConnectionError,
  AdminHttpError,
  AdminNoAnswerError,
  classifyFailure,
  parseRetryAfter,
} from '../../src/admin/errors.js';

/** A bare HTTP server whose next answer each test chooses, and which records what it got. */
let server: Server;
let baseUrl: string;
let answer: (request: IncomingMessage, response: ServerResponse, body: string) => void;
const seen: { method?: string; url?: string; headers?: IncomingMessage['headers']; body?: string } =
  {};

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      Object.assign(seen, {
        method: request.method,
        url: request.url,
        headers: request.headers,
        body,
      });
      answer(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function respond(status: number, body: unknown, headers: Record<string, string> = {}): void {
  answer = (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

async function failureOf(
  call: (client: AdminClient) => Promise<unknown>,
  options = {},
): Promise<unknown> {
  const client = new AdminClient({ baseUrl, requestTimeoutMs: 2_000, ...options });
  try {
    return await call(client).then(
      () => undefined,
      (error: unknown) => error,
    );
  } finally {
    await client.close();
  }
}

describe('the admin client classifies every failure once', () => {
  it.each([408, 429, 503])('HTTP %i is transient', async (status) => {
    respond(status, { errorcode: 'BUSY', message: 'try later' });
    const error = await failureOf((client) => client.postUsers([{ username: 'a' }]));
    expect(error).toBeInstanceOf(AdminHttpError);
    expect(classifyFailure(error)).toBe('transient');
  });

  it.each([502, 504])(
    'HTTP %i from a gateway is ambiguous for a write (its server may have applied it), transient for a read',
    async (status) => {
      respond(status, 'Bad Gateway');
      const write = await failureOf((client) => client.postUsers([{ username: 'a' }]));
      expect(write).toBeInstanceOf(AdminHttpError);
      expect(classifyFailure(write)).toBe('ambiguous');
      respond(status, 'Bad Gateway');
      const read = await failureOf((client) => client.listUsers({ username: 'a' }));
      expect(classifyFailure(read)).toBe('transient');
    },
  );

  it.each([400, 401, 403, 404, 409, 413, 422, 418])('HTTP %i is permanent', async (status) => {
    respond(status, { errorcode: 'NO', message: 'refused', index: 3 });
    const error = (await failureOf((client) =>
      client.putGroups([{ name: 'g' }]),
    )) as AdminHttpError;
    expect(classifyFailure(error)).toBe('permanent');
    expect(error).toMatchObject({ status, errorcode: 'NO', index: 3, message: 'refused' });
  });

  it('HTTP 500 is ambiguous: the server may have done part of it', async () => {
    respond(500, 'oops');
    expect(
      classifyFailure(await failureOf((client) => client.deleteUsers([{ username: 'a' }]))),
    ).toBe('ambiguous');
  });

  it('keeps Retry-After, in seconds or as a date', async () => {
    respond(429, { errorcode: 'RATE_LIMITED' }, { 'retry-after': '3' });
    expect(await failureOf((client) => client.listUsers())).toMatchObject({ retryAfterMs: 3_000 });
    expect(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThan(8_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });

  it('an error body under 200 is an error, as clients of the real product read it', async () => {
    respond(200, { errorcode: 'DUPLICATE', message: 'exists' });
    const error = await failureOf((client) => client.postUsers([{ username: 'a' }]));
    expect(error).toBeInstanceOf(AdminHttpError);
    expect(error).toMatchObject({ errorcode: 'DUPLICATE' });
    expect(classifyFailure(error)).toBe('permanent');
    respond(200, { error: 'v1 style failure' });
    expect(await failureOf((client) => client.postUsers([{ username: 'a' }]))).toMatchObject({
      message: 'v1 style failure',
    });
  });

  it('a 200 that is not a JSON array of records is a bad response', async () => {
    respond(200, '<html>proxy login</html>');
    const error = await failureOf((client) => client.listGroups());
    expect(error).toBeInstanceOf(AdminBadResponseError);
    respond(200, [{ userId: 'not a number' }]);
    expect(await failureOf((client) => client.listUsers())).toBeInstanceOf(AdminBadResponseError);
  });

  const WRITES: [string, (client: AdminClient) => Promise<unknown>][] = [
    ['PUT', (client) => client.putUsers([{ username: 'a' }])],
    ['POST', (client) => client.postUsers([{ username: 'a' }])],
    ['DELETE', (client) => client.deleteUsers([{ username: 'a' }])],
  ];
  const READS: [string, (client: AdminClient) => Promise<unknown>][] = [
    ['GET', (client) => client.listUsers({ username: 'a' })],
    [
      'GET (streamed)',
      async (client) => {
        for await (const _record of client.stream('users')) void _record;
      },
    ],
  ];

  it.each(WRITES)('a %s sent and never answered (reset) is ambiguous', async (_method, call) => {
    answer = (request) => request.socket.destroy();
    const error = await failureOf(call);
    expect(error).toBeInstanceOf(AdminNoAnswerError);
    expect(classifyFailure(error)).toBe('ambiguous');
  });

  it.each(WRITES)('a %s whose answer times out is ambiguous', async (_method, call) => {
    answer = () => {}; // never answers
    const error = await failureOf(call, { requestTimeoutMs: 200 });
    expect(error).toBeInstanceOf(AdminNoAnswerError);
    expect(classifyFailure(error)).toBe('ambiguous');
  });

  it.each(READS)(
    'a %s never answered (reset) is transient: a read changes nothing',
    async (_m, call) => {
      answer = (request) => request.socket.destroy();
      const error = await failureOf(call);
      expect(error).toBeInstanceOf(AdminNoAnswerError);
      expect(error).toMatchObject({ code: 'ADMIN_NO_ANSWER', method: 'GET' });
      expect(classifyFailure(error)).toBe('transient');
    },
  );

  it.each(READS)('a %s whose answer times out is transient', async (_method, call) => {
    answer = () => {}; // never answers
    const error = await failureOf(call, { requestTimeoutMs: 200 });
    expect(error).toBeInstanceOf(AdminNoAnswerError);
    expect(classifyFailure(error)).toBe('transient');
  });

  it('a GET whose answer breaks off midway is transient', async () => {
    answer = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('[{"userId":1},{"userId"', () => response.socket?.destroy());
    };
    const error = await failureOf((client) => client.listUsers());
    expect(error).toBeInstanceOf(AdminNoAnswerError);
    expect(classifyFailure(error)).toBe('transient');
  });

  it('a refused connection is transient: nothing was sent', async () => {
    const client = new AdminClient({ baseUrl: 'http://127.0.0.1:1' });
    const error = await client.listUsers().catch((caught: unknown) => caught);
    await client.close();
    expect(error).toBeInstanceOf(AdminConnectionError);
    expect(classifyFailure(error)).toBe('transient');
  });
});

describe('answers are checked against the spec', () => {
  it('a create answer of records without id and key is a bad answer, ambiguous for a write', async () => {
    respond(200, [{}, { bogus: 1 }]);
    const error = await failureOf((client) =>
      client.postUsers([{ username: 'a' }, { username: 'b' }]),
    );
    expect(error).toBeInstanceOf(AdminBadResponseError);
    expect(classifyFailure(error)).toBe('ambiguous');
  });

  it.each([
    [
      'postUsers without username',
      { userId: 1 },
      (c: AdminClient) => c.postUsers([{ username: 'a' }]),
    ],
    [
      'putUsers without userId',
      { username: 'a' },
      (c: AdminClient) => c.putUsers([{ username: 'a' }]),
    ],
    [
      'deleteUsers without username',
      { userId: 1, type: null, status: '' },
      (c: AdminClient) => c.deleteUsers([{ userId: 1 }]),
    ],
    ['postGroups without id', { name: 'g' }, (c: AdminClient) => c.postGroups([{ name: 'g' }])],
    ['putGroups without name', { id: 1 }, (c: AdminClient) => c.putGroups([{ id: 1, name: 'g' }])],
    [
      'deleteGroups without name',
      { id: 1, users: [] },
      (c: AdminClient) => c.deleteGroups([{ id: 1 }]),
    ],
    [
      'putAcls without groupId',
      { id: '0_1_X', name: 'a' },
      (c: AdminClient) => c.putAcls([{ name: 'a', groupId: 1 }]),
    ],
    [
      'putAcls with an empty id',
      { id: '', groupId: 1 },
      (c: AdminClient) => c.putAcls([{ name: 'a', groupId: 1 }]),
    ],
  ] as const)('%s is a bad answer', async (_label, record, call) => {
    respond(200, [record]);
    const error = await failureOf(call);
    expect(error).toBeInstanceOf(AdminBadResponseError);
    expect(classifyFailure(error)).toBe('ambiguous');
  });

  it('takes the DELETE answers the spec shows (a user by id: type null, status "", groups [])', async () => {
    const client = new AdminClient({ baseUrl });
    try {
      const user = { userId: 3, username: 'grace', type: null, status: '', groups: [] };
      respond(200, [user]);
      expect(await client.deleteUsers([{ userId: 3 }])).toEqual([user]);
      const group = { id: 1, name: 'Editors', description: '', acls: ['0_1_X'], users: [] };
      respond(200, [group]);
      expect(await client.deleteGroups([{ name: 'Editors' }])).toEqual([group]);
      const acl = { id: '0_1_X', groupId: 1, name: 'a' };
      respond(200, [acl]);
      expect(await client.putAcls([{ name: 'a', groupId: 1 }])).toEqual([acl]);
    } finally {
      await client.close();
    }
  });

  it('GET answers may lack fields (ldapDn, strings), never the id', async () => {
    const client = new AdminClient({ baseUrl });
    try {
      respond(200, [{ userId: 1 }, { userId: 2, username: 'b', unknownField: true }]);
      expect(await client.listUsers()).toHaveLength(2);
      respond(200, [{ id: 1, name: 'g' }]);
      expect(await client.listGroups()).toEqual([{ id: 1, name: 'g' }]);
      respond(200, [{ id: '0_1_X' }]);
      expect(await client.listAcls()).toEqual([{ id: '0_1_X' }]);
    } finally {
      await client.close();
    }
    respond(200, [{ userId: 1 }, { username: 'no id' }]);
    expect(await failureOf((c) => c.listUsers())).toBeInstanceOf(AdminBadResponseError);
    respond(200, [{ name: 'no id' }]);
    expect(await failureOf((c) => c.listGroups())).toBeInstanceOf(AdminBadResponseError);
    respond(200, [{ name: 'no id', groupId: 1 }]);
    expect(await failureOf((c) => c.listAcls())).toBeInstanceOf(AdminBadResponseError);
    respond(200, [{ userId: 1 }, {}]);
    const streamed = await failureOf(async (c) => {
      for await (const _record of c.stream('users')) void _record;
    });
    expect(streamed).toBeInstanceOf(AdminBadResponseError);
  });
});

describe('requests are built as the spec says', () => {
  it('records travel as JSON array text in the form field named after the resource', async () => {
    respond(200, [{ name: 'g', id: 1 }]);
    const client = new AdminClient({
      baseUrl,
      headers: { 'x-extra': 'yes' },
      auth: { apiKey: 'k-1' },
    });
    await client.postGroups([{ name: 'g' }]);
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/wf/restapi/v2/admin/groupManager');
    expect(seen.headers?.['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(seen.body).toMatch(/name="groups"\r\n\r\n\[\{"name":"g"\}\]/);
    expect(seen.headers).toMatchObject({ apikey: 'k-1', 'x-extra': 'yes' });
    await client.close();
  });

  it('urlencoded bodies, Basic auth, and user/pass parameters', async () => {
    respond(200, []);
    const basic = new AdminClient({
      baseUrl,
      bodyEncoding: 'urlencoded',
      auth: { user: 'u', password: 'p' },
    });
    await basic.deleteUsers([{ userId: 7 }]);
    expect(seen.headers?.['content-type']).toBe('application/x-www-form-urlencoded');
    expect(new URLSearchParams(seen.body).get('users')).toBe('[{"userId":7}]');
    expect(seen.headers?.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    await basic.close();
    const params = new AdminClient({
      baseUrl,
      auth: { user: 'u', password: 'p', userPasswordMode: 'params' },
    });
    await params.listUsers({ username: 'a b' });
    expect(seen.url).toBe('/wf/restapi/v2/admin/userManager?username=a+b&user=u&pass=p');
    expect(seen.headers?.authorization).toBeUndefined();
    await params.close();
  });

  it('a base URL with a path keeps it before /wf/restapi/v2/admin/', async () => {
    respond(200, []);
    const client = new AdminClient({ baseUrl: `${baseUrl}/dam/` });
    await client.listAcls({ groupId: 4 });
    expect(seen.url).toBe('/dam/wf/restapi/v2/admin/aclManager?groupId=4');
    await client.close();
  });
});
