import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

const TOKEN = 'console-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

function previewForm(file: string | Blob, fields: Record<string, string>, name = 'people.csv') {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  form.append(
    'file',
    typeof file === 'string' ? new Blob([file], { type: 'text/csv' }) : file,
    name,
  );
  return form;
}

async function preview(body: FormData): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/v1/previews`, { method: 'POST', headers: auth, body });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('console files', () => {
  it('are served without a token, with a strict content security policy', async () => {
    const page = await fetch(`${baseUrl}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('/console/app.js');

    const script = await fetch(`${baseUrl}/console/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);

    const redirect = await fetch(`${baseUrl}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('/console/');
  });

  it('only the console files are served; the API behind them still needs the token', async () => {
    expect((await fetch(`${baseUrl}/console/nothing.js`)).status).toBe(404);
    expect((await fetch(`${baseUrl}/console/..%2Fversion.ts`)).status).toBe(404);
    expect((await fetch(`${baseUrl}/console/x/y`)).status).toBe(401);
    expect((await fetch(`${baseUrl}/v1/meta`)).status).toBe(401);
    const noToken = await fetch(`${baseUrl}/v1/previews`, {
      method: 'POST',
      body: previewForm('username\nann\n', { resource: 'users', mode: 'create' }),
    });
    expect(noToken.status).toBe(401);
  });
});

describe('GET /v1/meta', () => {
  it('lists the modes, resources with their fields, and export formats', async () => {
    const response = await fetch(`${baseUrl}/v1/meta`, { headers: auth });
    const meta = (await response.json()) as {
      modes: string[];
      resources: Record<string, { name: string; key: boolean }[]>;
      exportFormats: string[];
    };
    expect(meta.modes).toEqual(expect.arrayContaining(['create', 'upsert', 'update', 'delete']));
    expect(meta.resources.users.find((field) => field.key)?.name).toBe('username');
    expect(meta.resources.groups.find((field) => field.key)?.name).toBe('name');
    expect(meta.exportFormats).toContain('csv');
  });
});

describe('POST /v1/previews', () => {
  const file = csv(
    ['Login', 'email', 'primaryGroup', 'Notes'],
    [
      ['ann', 'ann@example.com', '', 'hello'],
      ['bob', 'bob@example.com', 'twelve', 'x'],
    ],
  );

  it('suggests porter’s own matches and reports the columns that match no field', async () => {
    const { status, json } = await preview(
      previewForm(file, { resource: 'users', mode: 'upsert' }),
    );
    expect(status).toBe(200);
    expect(json.columns).toEqual([
      { name: 'Login', suggested: null, target: 'unknown' },
      { name: 'email', suggested: 'email', target: 'field', field: 'email' },
      { name: 'primaryGroup', suggested: 'primaryGroup', target: 'field', field: 'primaryGroup' },
      { name: 'Notes', suggested: null, target: 'unknown' },
    ]);
    expect(json.problem).toMatchObject({ code: 'PORTER_INPUT_UNKNOWN_COLUMN' });
    expect(json.format).toBe('csv');
  });

  it('reads the records under the proposed mapping, with their validation errors', async () => {
    const mapping = JSON.stringify({ columns: { Login: 'username' }, ignore: ['Notes'] });
    const { json } = await preview(
      previewForm(file, { resource: 'users', mode: 'upsert', mapping }),
    );
    expect(json.problem).toBeUndefined();
    expect((json.columns as { target: string }[]).map((column) => column.target)).toEqual([
      'field',
      'field',
      'field',
      'ignore',
    ]);
    expect(json.records).toMatchObject([
      { row: 1, valid: true, record: { username: 'ann', email: 'ann@example.com' } },
      { row: 2, valid: false, key: 'bob', field: 'primaryGroup', errorCode: 'PORTER_ROW_INVALID' },
    ]);
  });

  it('shows at most the first records of a large upload and reads only its head', async () => {
    const rows = Array.from({ length: 20_000 }, (_, index) => [
      `user.${index}`,
      `u${index}@example.com`,
    ]);
    const big = csv(['username', 'email'], rows);
    expect(big.length).toBeGreaterThan(256 * 1024);
    const { status, json } = await preview(
      previewForm(big.slice(0, 256 * 1024), { resource: 'users', mode: 'create', partial: 'true' }),
    );
    expect(status).toBe(200);
    expect(json.problem).toBeUndefined();
    expect((json.records as unknown[]).length).toBe(10);

    const tooLarge = await preview(
      previewForm(big + big + big + big + big, { resource: 'users', mode: 'create' }),
    );
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json).toMatchObject({ error: { code: 'PORTER_UPLOAD_TOO_LARGE' } });
  });

  it('the last record of a partial head is not shown: it may be cut short', async () => {
    const text = 'username,email\nann,ann@example.com\nbob,bob@exa';
    const { json } = await preview(
      previewForm(text, { resource: 'users', mode: 'create', partial: 'true', limit: '5' }),
    );
    expect(json.records).toMatchObject([{ row: 1, valid: true }]);
    const whole = await preview(
      previewForm(text, { resource: 'users', mode: 'create', limit: '5' }),
    );
    expect((whole.json.records as unknown[]).length).toBe(2);
  });

  it('takes the columns of NDJSON from its first record', async () => {
    const lines = [
      JSON.stringify({ username: 'nd.one', Team: 'x', enabled: true }),
      JSON.stringify({ username: 'nd.two', Team: 'y' }),
    ].join('\n');
    const { json } = await preview(
      previewForm(new Blob([lines]), { resource: 'users', mode: 'create' }, 'people.ndjson'),
    );
    expect(json.format).toBe('ndjson');
    expect((json.columns as { name: string }[]).map((column) => column.name)).toEqual([
      'username',
      'Team',
      'enabled',
    ]);
    expect(json.problem).toMatchObject({ code: 'PORTER_INPUT_UNKNOWN_COLUMN' });
  });

  it('refuses bad options and a mapping to an unknown field', async () => {
    const badMode = await preview(previewForm(file, { resource: 'users', mode: 'merge' }));
    expect(badMode.status).toBe(400);
    expect(badMode.json).toMatchObject({ error: { code: 'PORTER_USAGE' } });
    const badMapping = await preview(
      previewForm(file, {
        resource: 'users',
        mode: 'upsert',
        mapping: JSON.stringify({ columns: { Login: 'login' } }),
      }),
    );
    expect(badMapping.json).toMatchObject({ error: { code: 'PORTER_MAPPING_INVALID' } });
  });
});

describe('GET /v1/imports/:id/records', () => {
  it('pages through the results of one status in input order', async () => {
    const rows = Array.from({ length: 7 }, (_, index) =>
      index % 2 === 0 ? [`page.${index}`, 'x'] : [`page.${index}`, '12'],
    );
    const { info } = await pipeline.run(csv(['username', 'primaryGroup'], rows), {
      resource: 'users',
      mode: 'create',
    });
    const state = await fetch(`${baseUrl}/v1/imports/${info.id}`, { headers: auth });
    expect(await state.json()).toMatchObject({ state: 'completed_with_errors', settled: true });
    const base = `${baseUrl}/v1/imports/${info.id}/records`;
    const first = (await (
      await fetch(`${base}?status=failed&limit=2`, { headers: auth })
    ).json()) as {
      records: { row: number; status: string }[];
      more: boolean;
    };
    expect(first.records.map((record) => record.row)).toEqual([1, 3]);
    expect(first.more).toBe(true);
    const next = (await (
      await fetch(`${base}?status=failed&limit=2&after=3`, { headers: auth })
    ).json()) as { records: { row: number }[]; more: boolean };
    expect(next.records.map((record) => record.row)).toEqual([5, 7]);
    expect(next.more).toBe(false);
    const bad = await fetch(`${base}?status=nope`, { headers: auth });
    expect(bad.status).toBe(400);
    const missing = await fetch(`${baseUrl}/v1/imports/nope/records`, { headers: auth });
    expect(missing.status).toBe(404);
  });
});
