/**
 * Authentication (spec 5 leaves it open; real-product-notes lists the product's ways):
 * apikey query parameter or header; HTTP Basic or user/pass parameters; off unless configured.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { FormData, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { adminFailure, withSandbox } from '../helpers/sandbox.js';

const USERS = '/wf/restapi/v2/admin/userManager';

describe('authentication', () => {
  it('is off unless configured', async () => {
    await withSandbox({}, async ({ url }) => {
      expect((await request(url + USERS)).statusCode).toBe(200);
    });
  });

  it('notes "an API key, sent as the apikey query parameter or as an apikey request header"', async () => {
    await withSandbox({ apiKey: 'k-123' }, async ({ url, client }) => {
      expect(await client.postUsers([{ username: 'ada' }])).toHaveLength(1);
      expect((await request(`${url}${USERS}?apikey=k-123`)).statusCode).toBe(200);
      const missing = await request(url + USERS);
      expect(missing.statusCode).toBe(401);
      expect(await missing.body.json()).toMatchObject({ errorcode: 'UNAUTHORIZED' });
      const wrong = await request(url + USERS, { headers: { apikey: 'k-124' } });
      expect(wrong.statusCode).toBe(401);
      await wrong.body.dump();
    });
  });

  it('notes name the apikey query parameter and header only: an apikey form field is 401, nothing applied', async () => {
    await withSandbox({ apiKey: 'k-123' }, async ({ url, store }) => {
      const form = new FormData();
      form.append('users', '[{"username":"ada"}]');
      form.append('apikey', 'k-123');
      const refused = await request(url + USERS, { method: 'POST', body: form });
      expect(refused.statusCode).toBe(401);
      expect(await refused.body.json()).toMatchObject({ errorcode: 'UNAUTHORIZED' });
      const urlencoded = await request(url + USERS, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ users: '[{"username":"ada"}]', apikey: 'k-123' }).toString(),
      });
      expect(urlencoded.statusCode).toBe(401);
      await urlencoded.body.dump();
      expect(store.counts().users).toBe(0);
      const inQuery = await request(`${url}${USERS}?apikey=k-123`, {
        method: 'POST',
        body: (() => {
          const body = new FormData();
          body.append('users', '[{"username":"ada"}]');
          return body;
        })(),
      });
      expect(inQuery.statusCode).toBe(200);
      await inQuery.body.dump();
      expect(store.counts().users).toBe(1);
    });
  });

  it('notes "an HTTP Basic Authorization header" and "user and pass request parameters"', async () => {
    await withSandbox({ user: 'admin', password: 'pa:ss wörd' }, async ({ url, client }) => {
      expect(await client.postUsers([{ username: 'ada' }])).toHaveLength(1);
      const params = new AdminClient({
        baseUrl: url,
        auth: { user: 'admin', password: 'pa:ss wörd', userPasswordMode: 'params' },
      });
      try {
        // GET carries user/pass in the query, writes carry them as form fields.
        expect(await params.listUsers()).toHaveLength(1);
        expect(await params.postUsers([{ username: 'alan' }])).toHaveLength(1);
      } finally {
        await params.close();
      }
      const missing = await request(url + USERS);
      expect(missing.statusCode).toBe(401);
      expect(missing.headers['www-authenticate']).toMatch(/^Basic realm=/);
      await missing.body.dump();
    });
  });

  it('wrong user or password is 401 UNAUTHORIZED, classified permanent by the client', async () => {
    await withSandbox({ user: 'admin', password: 'secret' }, async ({ url }) => {
      for (const auth of [
        { user: 'admin', password: 'wrong' },
        { user: 'root', password: 'secret' },
        { user: 'admin', password: 'wrong', userPasswordMode: 'params' as const },
      ]) {
        const client = new AdminClient({ baseUrl: url, auth });
        try {
          const error = await adminFailure(() => client.listUsers());
          expect(error).toMatchObject({
            status: 401,
            errorcode: 'UNAUTHORIZED',
            code: 'ADMIN_HTTP_ERROR',
          });
        } finally {
          await client.close();
        }
      }
    });
  });

  it('with both configured, either way in is accepted', async () => {
    const options = { apiKey: 'key', user: 'admin', password: 'secret' };
    await withSandbox(options, async ({ url }) => {
      for (const auth of [{ apiKey: 'key' }, { user: 'admin', password: 'secret' }]) {
        const client = new AdminClient({ baseUrl: url, auth });
        try {
          expect(await client.listUsers()).toEqual([]);
        } finally {
          await client.close();
        }
      }
      const form = new FormData();
      form.append('users', '[{"username":"ada"}]');
      form.append('user', 'admin');
      form.append('pass', 'secret');
      const created = await request(url + USERS, { method: 'POST', body: form });
      expect(created.statusCode).toBe(200);
      await created.body.dump();
    });
  });

  it('secrets never reach the log, wherever they travel', async () => {
    let logged = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged += chunk.toString();
        done();
      },
    });
    const logger = pino({ level: 'trace' }, sink);
    const options = { apiKey: 'KEY-SECRET-1', user: 'admin', password: 'PASS-SECRET-2', logger };
    await withSandbox(options, async ({ url }) => {
      await (await request(`${url}${USERS}?apikey=KEY-SECRET-1`)).body.dump();
      await (await request(`${url}${USERS}?user=admin&pass=PASS-SECRET-2`)).body.dump();
      await (await request(`${url}${USERS}?apikey=WRONG-SECRET-3`)).body.dump();
      await (await request(`${url}/nowhere?pass=PASS-SECRET-2`)).body.dump();
    });
    expect(logged).toContain(USERS);
    expect(logged).not.toMatch(/SECRET/);
  });
});
