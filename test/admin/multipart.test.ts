import { describe, expect, it } from 'vitest';
import { multipartBody } from '../../src/admin/multipart.js';

/** Reads a body back the way a server's multipart parser (undici's, as the sandbox's) does. */
async function fieldsOf(body: string, contentType: string): Promise<[string, string][]> {
  const data = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  return [...data].map(([name, value]) => [name, String(value)]);
}

describe('multipartBody', () => {
  it('writes text fields a multipart parser reads back unchanged', async () => {
    const records = JSON.stringify([
      { username: 'ann', note: 'line one\r\nline two', dashes: '--\r\n--x--', name: 'Ünïcødé 🎉' },
    ]);
    const fields: [string, string][] = [
      ['users', records],
      ['user', 'admin'],
      ['pass', ''],
    ];
    const { body, contentType } = multipartBody(fields);
    expect(contentType).toMatch(/^multipart\/form-data; boundary=----porter-[0-9a-f]{32}$/);
    expect(await fieldsOf(body, contentType)).toEqual(fields);
  });

  it('takes a new boundary for every body', () => {
    const first = multipartBody([['users', '[]']]).contentType;
    expect(multipartBody([['users', '[]']]).contentType).not.toBe(first);
  });

  it('refuses a field name that would need escaping', () => {
    expect(() => multipartBody([['a"b', 'x']])).toThrow(/not plain/);
    expect(() => multipartBody([['a\r\nb', 'x']])).toThrow(/not plain/);
  });
});
