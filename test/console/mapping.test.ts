import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMappingFile } from '../../src/mapping/read-mapping-file.js';
import { csv } from '../helpers/pipeline.js';
import { eventually, signIn, startConsoleHarness, type ConsoleHarness } from './harness.js';

let harness: ConsoleHarness;

beforeAll(async () => {
  harness = await startConsoleHarness();
  await harness.pipeline.run(
    csv(['name'], [['Staff'], ['Marketing'], ['Engineering'], ['Sales']]),
    { resource: 'groups', mode: 'create' },
  );
});
afterAll(async () => {
  await harness?.close();
});

describe('console: a mapping with expressions', () => {
  it('previews computed fields, follows an edited expression, downloads the mapping and imports', async () => {
    const path = 'examples/hr/mapping.json';
    // the console sends the mapping over HTTP: its table inline
    const mapping = await readMappingFile(path, JSON.parse(await readFile(path, 'utf8')), 'users');
    const page = await signInToNewImport();
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'hr-export.csv',
      mimeType: 'text/csv',
      buffer: await readFile('examples/hr/hr-export.csv'),
    });
    await page.getByLabel('Mode').selectOption('upsert');
    await page.getByLabel('Load a mapping file').setInputFiles({
      name: 'mapping.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(mapping)),
    });
    const preview = page.getByRole('table', { name: 'First records of the file' });
    const first = preview.getByRole('row').nth(1);

    await eventually(() => first.textContent()).toContain('jmuller');
    await eventually(() => preview.getByRole('row').nth(5).textContent()).toContain('skipped');
    // a leaver with no account is not created
    await eventually(() => preview.getByRole('row').nth(4).textContent()).toContain(
      'no account on the DAM holds anchor E1004',
    );
    // a column no field takes, but the mapping's expressions read, says so
    await eventually(() =>
      page.getByLabel('Field for column Employee ID').locator('option:checked').textContent(),
    ).toBe('(read by anchor)');
    await eventually(() =>
      page.getByLabel('Field for column Given Name').locator('option:checked').textContent(),
    ).toBe('(read by username, firstName)');

    // an edited expression changes the preview
    const city = page.getByLabel('Expression for city');
    await city.fill('$uppercase(Office)');
    await eventually(() => first.textContent()).toContain('ZÜRICH');
    // a broken one says where, and the import cannot start
    await city.fill('$uppercase(Office');
    await eventually(() => page.locator('main').innerText()).toMatch(
      /fields\.city: syntax error.*position/,
    );
    await city.fill('$uppercase(Office)');
    await eventually(() => first.textContent()).toContain('ZÜRICH');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download mapping' }).click(),
    ]);
    const saved = JSON.parse(await readFile((await download.path())!, 'utf8')) as {
      fields: Record<string, string>;
      tables: Record<string, unknown>;
      when: string;
    };
    expect(saved.fields.city).toBe('$uppercase(Office)');
    expect(saved.when).toBe(mapping.when);
    expect(saved.tables).toEqual(mapping.tables);
    expect(saved).toMatchObject({ anchor: '`Employee ID`', join: 'email' });

    await page.getByRole('button', { name: 'Start import' }).click();
    await page.waitForURL(/#\/imports\/(?!new$)[^/]+$/);
    const importId = decodeURIComponent(page.url().split('#/imports/')[1]!);
    const info = await harness.pipeline.waitFinal(importId);
    expect(info.counts).toMatchObject({ succeeded: 5, skipped: 2, failed: 0 });
    const client = harness.pipeline.context.createAdminClient();
    try {
      const users = new Map((await client.listUsers()).map((user) => [user.username, user]));
      expect(users.get('jmuller')).toMatchObject({ city: 'ZÜRICH', status: 'Active' });
      expect(users.has('snowak')).toBe(false);
      expect(users.get('aoneil')).toMatchObject({ substitutionMap: { porterAnchor: 'E1007' } });
      expect(users.has('mgarcia') && users.has('maria.garcia')).toBe(true);
    } finally {
      await client.close();
    }
    expect(harness.problems).toEqual([]);
  });
});

describe("console: a mapping's way of writing the feed", () => {
  it('loading a mapping sets its list separator and delimiter, as porter import takes them', async () => {
    const page = await signInToNewImport();
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'feed.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('username;groups\nsep.ann;Staff,Sales\n'),
    });
    await page.getByLabel('Mode').selectOption('upsert');
    await page.getByLabel('Load a mapping file').setInputFiles({
      name: 'mapping.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ listSeparator: ',', delimiter: ';' })),
    });
    await eventually(() => page.getByLabel('List separator').inputValue()).toBe(',');
    await eventually(() => page.getByLabel('Delimiter').inputValue()).toBe(';');
    await page.getByRole('button', { name: 'Start import' }).click();
    await page.waitForURL(/#\/imports\/(?!new$)[^/]+$/);
    const importId = decodeURIComponent(page.url().split('#/imports/')[1]!);
    const info = await harness.pipeline.waitFinal(importId);
    expect(info.counts).toMatchObject({ succeeded: 1, failed: 0 });
    const { store } = harness.pipeline.sandbox;
    const ids = ['Staff', 'Sales'].map((name) => store.groupByName(name)!.id);
    expect(store.userByName('sep.ann')?.groups).toEqual(ids);
    expect(harness.problems).toEqual([]);
  });
});

async function signInToNewImport() {
  const page = await harness.newPage();
  await signIn(page, harness.baseUrl);
  await page.goto(`${harness.baseUrl}/console/#/imports/new`);
  await page.getByRole('heading', { name: 'New import' }).waitFor();
  return page;
}
