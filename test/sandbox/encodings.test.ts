/**
 * Spec 1: "the records are sent as a form-data field ... The field value is the text of a JSON
 * array"; "Every response body is a JSON array"; `pretty` formats it. Both form encodings,
 * raw and through the client, and pretty as query parameter or form field.
 */
import { FormData, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { useSandbox, withSandbox } from '../helpers/sandbox.js';

const USERS = '/wf/restapi/v2/admin/userManager';
const GROUPS = '/wf/restapi/v2/admin/groupManager';

describe('form encodings and pretty', () => {
  const current = useSandbox();

  it('accepts a raw application/x-www-form-urlencoded request; pretty=true as form field indents by 2', async () => {
    const body = new URLSearchParams({
      users: JSON.stringify([{ username: 'ada lovelace', firstName: 'Ada' }]),
      pretty: 'true',
    }).toString();
    const response = await request(current().url + USERS, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const text = await response.body.text();
    const records = JSON.parse(text) as unknown[];
    expect(records).toMatchObject([{ userId: 1, username: 'ada lovelace', firstName: 'Ada' }]);
    expect(text).toBe(JSON.stringify(records, null, 2));
  });

  it('accepts a raw multipart/form-data request, hand-built, with pretty as query parameter', async () => {
    const boundary = '----porter-test-boundary';
    const body =
      `--${boundary}\r\n` +
      'Content-Disposition: form-data; name="groups"\r\n\r\n' +
      JSON.stringify([{ name: 'Éditeurs ✓' }]) +
      `\r\n--${boundary}--\r\n`;
    const response = await request(`${current().url}${GROUPS}?pretty=true`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(response.statusCode).toBe(200);
    const text = await response.body.text();
    expect(JSON.parse(text)).toMatchObject([{ id: 1, name: 'Éditeurs ✓' }]);
    expect(text).toBe(JSON.stringify(JSON.parse(text), null, 2));
  });

  it('accepts multipart from undici FormData, the field also sent as a file part', async () => {
    const form = new FormData();
    form.append('users', new Blob([JSON.stringify([{ username: 'from-file' }])]), 'users.json');
    const response = await request(current().url + USERS, { method: 'POST', body: form });
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toMatchObject([{ username: 'from-file' }]);
  });

  it('DELETE carries its form too (multipart and urlencoded)', async () => {
    const { client, url, store } = current();
    await client.postUsers([{ username: 'a' }, { username: 'b' }]);
    const form = new FormData();
    form.append('users', '[{"username":"a"}]');
    expect((await request(url + USERS, { method: 'DELETE', body: form })).statusCode).toBe(200);
    const response = await request(url + USERS, {
      method: 'DELETE',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'users=%5B%7B%22userId%22%3A%222%22%7D%5D',
    });
    expect(response.statusCode).toBe(200);
    expect(store.counts().users).toBe(0);
  });

  it('the client works in both encodings', async () => {
    const { url, store } = current();
    const urlencoded = new AdminClient({ baseUrl: url, bodyEncoding: 'urlencoded' });
    try {
      await urlencoded.postUsers([{ username: 'a+b&c=d ü' }]);
      expect(store.userByName('a+b&c=d ü')).toBeDefined();
    } finally {
      await urlencoded.close();
    }
  });

  it('1.2 "pretty ... Its default is false": answers are compact unless pretty is true', async () => {
    const { client, url } = current();
    await client.postUsers([{ username: 'ada' }]);
    const compact = await (await request(url + USERS)).body.text();
    expect(compact).toBe(JSON.stringify(JSON.parse(compact)));
    const pretty = await (await request(`${url}${USERS}?pretty=true`)).body.text();
    expect(pretty).toBe(JSON.stringify(JSON.parse(pretty), null, 2));
    const notPretty = await (await request(`${url}${USERS}?pretty=false`)).body.text();
    expect(notPretty).toBe(compact);
    const empty = await (await request(`${url}${GROUPS}?pretty=true`)).body.text();
    expect(empty).toBe('[]');
  });
});

describe('large answers', () => {
  it('GET of all records streams one valid JSON array, compact or pretty, identical to the store', async () => {
    await withSandbox({ seed: { users: 3000, groups: 12, acls: 30 } }, async ({ url, store }) => {
      const compact = await (await request(url + USERS)).body.text();
      expect(JSON.parse(compact)).toEqual(store.users());
      const pretty = await (await request(`${url}${USERS}?pretty=true`)).body.text();
      expect(pretty).toBe(JSON.stringify(store.users(), null, 2));
    });
  });

  it('the client streams them record by record', async () => {
    await withSandbox({ seed: { users: 2000 } }, async ({ client }) => {
      let count = 0;
      for await (const user of client.stream('users')) {
        expect(user.userId).toBe(++count);
      }
      expect(count).toBe(2000);
    });
  });
});
