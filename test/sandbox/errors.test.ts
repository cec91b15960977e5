/**
 * Error answers (spec 7 leaves them open; docs/sandbox.md lists its choices):
 * JSON body {errorcode, message, index}, stable errorcodes, and atomic requests.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { classifyFailure } from '../../src/admin/errors.js';
import { buildSandboxApp } from '../../src/sandbox/server.js';
import { adminFailure, useSandbox, withSandbox } from '../helpers/sandbox.js';

const USERS = '/wf/restapi/v2/admin/userManager';

describe('error answers', () => {
  const current = useSandbox();

  async function send(form: Record<string, string>, method = 'POST', path = USERS) {
    const response = await request(current().url + path, {
      method: method as 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return {
      status: response.statusCode,
      body: (await response.body.json()) as Record<string, unknown>,
    };
  }

  it('a failing record answers {"errorcode", "message", "index"} with the index of that record', async () => {
    const answer = await send({ users: JSON.stringify([{ username: 'a' }, { username: 7 }]) });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      errorcode: 'BAD_REQUEST',
      message: expect.stringContaining('username'),
      index: 1,
    });
  });

  it('a malformed form is 400 without index: field missing, not JSON, not an array, not objects', async () => {
    const missing = await send({ groups: '[]' });
    expect(missing).toMatchObject({ status: 400, body: { errorcode: 'BAD_REQUEST' } });
    expect(missing.body).not.toHaveProperty('index');
    expect((await send({ users: '[{"username": ' })).status).toBe(400);
    expect((await send({ users: '{"username":"a"}' })).status).toBe(400);
    expect(await send({ users: '["a"]' })).toMatchObject({ status: 400, body: { index: 0 } });
  });

  it('field types are checked with the shared record schemas: 400 naming the field', async () => {
    const { client } = current();
    const error = await adminFailure(() =>
      client.postUsers([{ username: 'a', groups: ['x' as unknown as number] }]),
    );
    expect(error).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST', index: 0 });
    expect(error.message).toContain('groups');
    const group = await adminFailure(() => client.postGroups([{ name: 'g', priority: 1.5 }]));
    expect(group.message).toContain('priority');
  });

  it('a request is atomic: when one record fails none is applied', async () => {
    const { client, store } = current();
    await client.postUsers([{ username: 'taken' }]);
    const error = await adminFailure(() =>
      client.putUsers([
        { username: 'a' },
        { username: 'b' },
        { username: 'taken' },
        { username: 'c' },
      ]),
    );
    expect(error).toMatchObject({ status: 409, index: 2 });
    expect(store.users().map((user) => user.username)).toEqual(['taken']);
    expect(store.stats.applied.users.created).toBe(1);
  });

  it('an empty array is a valid request that changes nothing', async () => {
    const { client, store } = current();
    expect(await client.postUsers([])).toEqual([]);
    expect(store.version).toBe(0);
  });

  it('an unknown path is 404 NOT_FOUND with a JSON body', async () => {
    const response = await request(`${current().url}/wf/restapi/v2/admin/roleManager?apikey=x`);
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toEqual({
      errorcode: 'NOT_FOUND',
      message: 'no such path: GET /wf/restapi/v2/admin/roleManager',
    });
  });

  it('a body that is not form-data is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await request(current().url + USERS, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ users: [] }),
    });
    expect(response.statusCode).toBe(415);
    expect(await response.body.json()).toMatchObject({ errorcode: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('a body over the body limit is 413 TOO_LARGE', async () => {
    await withSandbox({ bodyLimit: 1024 }, async ({ client, store }) => {
      const error = await adminFailure(() =>
        client.postUsers([{ username: 'big', address1: 'x'.repeat(4096) }]),
      );
      expect(error).toMatchObject({ status: 413, errorcode: 'TOO_LARGE' });
      expect(store.counts().users).toBe(0);
    });
  });

  it('a GET filter that is not an integer is 400', async () => {
    const response = await request(`${current().url}${USERS}?userId=abc`);
    expect(response.statusCode).toBe(400);
    expect(await response.body.json()).toMatchObject({ errorcode: 'BAD_REQUEST' });
  });

  it.each([
    ['userManager', 'userId'],
    ['userManager', 'username'],
    ['groupManager', 'id'],
    ['groupManager', 'name'],
    ['aclManager', 'id'],
    ['aclManager', 'userId'],
    ['aclManager', 'groupId'],
  ])(
    '4.1/4.2/notes: "with none of them, all are returned"; %s?%s= given empty is 400, not all records',
    async (path, filter) => {
      const { client } = current();
      await client.postGroups([{ name: 'Editors' }]);
      await client.postUsers([{ username: 'ada', groups: [1] }]);
      await client.putAcls([{ name: 'Editors standard', groupId: 1 }]);
      const response = await request(`${current().url}/wf/restapi/v2/admin/${path}?${filter}=`);
      expect(response.statusCode).toBe(400);
      expect(await response.body.json()).toMatchObject({
        errorcode: 'BAD_REQUEST',
        message: expect.stringContaining(filter),
      });
    },
  );

  it('an empty filter from the client is refused (permanent), never read as "all records"', async () => {
    const { client } = current();
    await client.postUsers([{ username: 'ada' }]);
    const error = await adminFailure(() => client.listUsers({ username: '' }));
    expect(error).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST' });
    expect(classifyFailure(error)).toBe('permanent');
    expect(await client.listUsers({})).toHaveLength(1);
  });

  it('the client classifies the answers: 4xx permanent, with errorcode and index kept', async () => {
    const { client } = current();
    await client.postUsers([{ username: 'a' }]);
    const error = await adminFailure(() => client.postUsers([{ username: 'a' }]));
    expect(classifyFailure(error)).toBe('permanent');
    expect(error).toMatchObject({
      code: 'ADMIN_HTTP_ERROR',
      errorcode: 'ALREADY_EXISTS',
      index: 0,
    });
  });

  it('buildSandboxApp serves the same routes to inject()', async () => {
    const app = await buildSandboxApp();
    try {
      const created = await app.inject({
        method: 'POST',
        url: USERS,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ users: '[{"username":"ada"}]' }).toString(),
      });
      expect(created.statusCode).toBe(200);
      expect(created.json()).toMatchObject([{ userId: 1, username: 'ada' }]);
      const missing = await app.inject({ method: 'GET', url: '/nowhere' });
      expect(missing.statusCode).toBe(404);
    } finally {
      await app.close();
    }
  });
});
