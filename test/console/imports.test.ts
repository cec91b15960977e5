import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMapping } from '../../src/ingest/index.js';
import { csv } from '../helpers/pipeline.js';
import { eventually, signIn, startConsoleHarness, TOKEN, type ConsoleHarness } from './harness.js';

const HOSTILE = '<img src=x onerror=window.__xss=1>';
let harness: ConsoleHarness;

beforeAll(async () => {
  harness = await startConsoleHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('console: sign-in', () => {
  it('refuses a wrong token, keeps the right one in sessionStorage only', async () => {
    const page = await harness.newPage();
    await page.goto(`${harness.baseUrl}/console/`);
    await page.getByLabel('API token').fill('not-the-token-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toBe('That token was refused.');
    expect(
      await page
        .getByLabel('API token')
        .evaluate((element) => element === element.ownerDocument.activeElement),
    ).toBe(true);
    // keyboard only: the token field has the focus back, Enter submits
    await page.keyboard.type(TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Imports', level: 1 }).waitFor();
    const storage = await page.evaluate(
      "({ session: sessionStorage.getItem('porter.token'), local: localStorage.length, cookie: document.cookie })",
    );
    expect(storage).toEqual({ session: TOKEN, local: 0, cookie: '' });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    expect(await page.evaluate("sessionStorage.getItem('porter.token')")).toBeNull();
    expect(harness.problems).toEqual([]);
  });
});

describe('console: an import', () => {
  it('previews, maps a column by hand, runs, shows the failed row as text and downloads the report', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.getByRole('link', { name: 'New import' }).first().click();
    await page.getByRole('heading', { name: 'New import' }).waitFor();

    const file = csv(
      ['Login', 'email', 'primaryGroup', 'Notes'],
      [
        ['console.ann', 'ann@example.com', '', 'first'],
        ['console.bob', 'bob@example.com', HOSTILE, HOSTILE],
        ['console.cid', 'cid@example.com', '', 'third'],
      ],
    );
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(file),
    });
    await page.getByLabel('Mode').selectOption('create');

    // Login matches no field: ignored until it is mapped by hand
    const login = page.getByLabel('Field for column Login');
    await eventually(() => login.inputValue()).toBe('');
    await eventually(() => page.getByLabel('Field for column email').inputValue()).toBe('email');
    const preview = page.getByRole('table', { name: 'First records of the file' });
    await eventually(() => preview.getByRole('row').nth(1).textContent()).toContain(
      'field "username" is required',
    );
    await login.selectOption('username');
    await eventually(() => preview.getByRole('row').nth(1).textContent()).toContain('ok');
    const bad = preview.getByRole('row').nth(2);
    await eventually(() => bad.textContent()).toContain('invalid');
    await eventually(() => bad.textContent()).toContain('is not an integer');
    // hostile cell content shows as text, never as markup
    await bad.getByRole('cell', { name: HOSTILE, exact: true }).first().waitFor();
    expect(await page.locator('table img').count()).toBe(0);
    expect(await page.locator('main').innerText()).not.toMatch(/undefined|\[object /);

    // the choices, saved as a mapping file the CLI reads
    const [mappingFile] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download mapping' }).click(),
    ]);
    expect(mappingFile.suggestedFilename()).toBe('mapping.json');
    const mapping = loadMapping(
      JSON.parse(await readFile((await mappingFile.path())!, 'utf8')) as unknown,
      'users',
    );
    expect(mapping).toEqual({ columns: { Login: 'username' }, ignore: ['Notes'], defaults: {} });

    await page.getByRole('button', { name: 'Start import' }).click();
    await page.waitForURL(/#\/imports\/(?!new$)[^/]+$/);
    const importId = decodeURIComponent(page.url().split('#/imports/')[1]!);
    await page
      .locator('.summary')
      .getByText('completed with errors', { exact: true })
      .waitFor({ timeout: 60_000 });
    const bar = page.locator('.summary progress');
    await eventually(() => bar.getAttribute('max')).toBe('3');
    expect(await bar.evaluate((element) => (element as unknown as { value: number }).value)).toBe(
      3,
    );
    await page.getByText('2 succeeded · 1 failed').waitFor();

    // why records did not succeed, per status and code
    await eventually(() => page.locator('.summary .why-list').textContent()).toBe(
      '1 failed: PORTER_ROW_INVALID',
    );
    const failed = page.getByRole('table', { name: 'Failed and unprocessed records' });
    const failedRow = failed.getByRole('row').nth(1);
    await eventually(() => failedRow.getByRole('cell').nth(0).textContent()).toBe('2');
    await eventually(() => failedRow.getByRole('cell').nth(1).textContent()).toBe('console.bob');
    await eventually(() => failedRow.getByRole('cell').nth(2).textContent()).toBe('failed');
    await eventually(() => failedRow.getByRole('cell').nth(3).textContent()).toBe('primaryGroup');
    await eventually(() => failedRow.getByRole('cell').nth(4).textContent()).toContain(HOSTILE);
    expect(await page.locator('img').count()).toBe(0);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Failed and unprocessed (CSV)' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${importId}-failed.csv`);
    const report = await readFile((await download.path())!, 'utf8');
    expect(report).toContain('console.bob');
    expect(report).not.toContain('console.ann');
    expect(report).toContain('PORTER_ROW_INVALID');

    // the list shows it, newest first, with its counts
    await page.getByRole('link', { name: 'Imports', exact: true }).click();
    const firstRow = page
      .getByRole('table', { name: 'Imports, newest first' })
      .getByRole('row')
      .nth(1);
    await eventually(() => firstRow.textContent()).toContain(importId);
    await eventually(() => firstRow.textContent()).toContain('2 succeeded · 1 failed');

    expect(await page.evaluate('typeof window.__xss')).toBe('undefined');
    expect(harness.problems).toEqual([]);
    const results = await harness.pipeline.results(importId);
    expect(results.map((result) => result.status)).toEqual(['succeeded', 'failed', 'succeeded']);

    // the failed row is invalid: a retry would fail it again, so the page offers none and says why
    await firstRow.getByRole('link', { name: importId }).click();
    await eventually(() => page.locator('.left-out').textContent()).toContain(
      '1 failed record is left out of a retry (1 PORTER_ROW_INVALID)',
    );
    expect(await page.getByRole('button', { name: /^Retry/ }).count()).toBe(0);
  });

  it('retries from the page only the records a retry can mend, and says what it left out', async () => {
    // row 2 names a group that does not exist yet; row 3 repeats row 1's username
    const { info } = await harness.pipeline.run(
      csv(
        ['username', 'email', 'groups'],
        [
          ['page.retry.ann', 'ann@example.com', ''],
          ['page.retry.bob', 'bob@example.com', 'Later Group'],
          ['page.retry.ann', 'other@example.com', ''],
        ],
      ),
      { resource: 'users', mode: 'upsert' },
    );
    const importId = info.id;
    const client = harness.pipeline.context.createAdminClient();
    await client.postGroups([{ name: 'Later Group' }]);
    await client.close();

    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/${encodeURIComponent(importId)}`);
    await eventually(() => page.locator('.left-out').textContent()).toContain(
      '1 failed record is left out of a retry (1 PORTER_ROW_INVALID)',
    );
    await page.getByRole('button', { name: 'Retry 1 failed' }).click();
    await page.waitForURL((url) => !url.hash.endsWith(encodeURIComponent(importId)));
    await page.getByRole('link', { name: importId }).waitFor();
    await page
      .locator('.summary')
      .getByText('completed', { exact: true })
      .waitFor({ timeout: 60_000 });
    const retryId = decodeURIComponent(page.url().split('#/imports/')[1]!);
    expect(await harness.pipeline.context.store.get(retryId)).toMatchObject({
      retryOf: importId,
      total: 1,
    });
    expect(harness.pipeline.sandbox.store.userByName('page.retry.ann')).toMatchObject({
      email: 'ann@example.com',
    });
    expect(harness.problems).toEqual([]);
  });

  it('a dry run shows its plan with field changes and is applied from the page', async () => {
    await harness.pipeline.run(
      csv(['username', 'email'], [['plan.carl', 'carl@old.example.com']]),
      { resource: 'users', mode: 'create' },
    );
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/new`);
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'plan.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(
        csv(
          ['username', 'email'],
          [
            ['plan.carl', 'carl@new.example.com'],
            ['plan.dana', 'dana@example.com'],
          ],
        ),
      ),
    });
    await page.getByLabel('Mode').selectOption('upsert');
    await page.getByLabel('Dry run (plan only, nothing written)').check();
    await eventually(() =>
      page.getByRole('table', { name: 'First records of the file' }).getByRole('row').count(),
    ).toBe(3);
    await page.getByRole('button', { name: 'Start dry run' }).click();
    await page.waitForURL(/#\/imports\/(?!new$)[^/]+$/);
    const dryRunId = decodeURIComponent(page.url().split('#/imports/')[1]!);

    await page.getByRole('heading', { name: 'Plan', exact: true }).waitFor({ timeout: 60_000 });
    const actions = page.getByRole('table', { name: 'Records per action' });
    await eventually(() => actions.getByRole('row', { name: /create/ }).textContent()).toBe(
      'create1',
    );
    await eventually(() => actions.getByRole('row', { name: /update/ }).textContent()).toBe(
      'update1',
    );
    const plan = page.getByRole('table', { name: 'Planned records and their changes' });
    const carl = plan.getByRole('row', { name: /plan\.carl/ });
    await eventually(() => carl.textContent()).toContain('update');
    await eventually(() => carl.locator('del').textContent()).toBe('carl@old.example.com');
    await eventually(() => carl.locator('ins').textContent()).toBe('carl@new.example.com');
    await eventually(() => plan.getByRole('row', { name: /plan\.dana/ }).textContent()).toContain(
      'create',
    );

    expect(await page.locator('main').innerText()).not.toMatch(/undefined|\[object /);
    // applying asks first, naming what the plan writes
    await eventually(() => page.locator('.plan-writes').textContent()).toBe(
      'Writes: create 1, update 1',
    );
    await page.getByRole('button', { name: 'Apply plan…' }).click();
    const dialog = page.getByRole('dialog', { name: /Apply the plan of/ });
    const go = dialog.getByRole('button', { name: 'Apply: create 1, update 1' });
    expect(await go.isDisabled()).toBe(true);
    await dialog.getByLabel('Type “create 1, update 1” to confirm').fill('create 1, update 1');
    await go.click();
    await page.waitForURL((url) => !url.hash.endsWith(encodeURIComponent(dryRunId)));
    const applyId = decodeURIComponent(page.url().split('#/imports/')[1]!);
    expect(applyId).not.toBe(dryRunId);
    await page
      .locator('.summary')
      .getByText('completed', { exact: true })
      .waitFor({ timeout: 60_000 });
    await page.getByRole('link', { name: dryRunId }).waitFor();
    const results = await harness.pipeline.results(applyId);
    expect(results.map((result) => [result.key, result.status, result.action])).toEqual([
      ['plan.carl', 'succeeded', 'update'],
      ['plan.dana', 'succeeded', 'create'],
    ]);
    expect(harness.problems).toEqual([]);
  });

  it('a file dropped on the upload area is previewed like a chosen one', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/new`);
    await page.getByRole('heading', { name: 'New import' }).waitFor();
    const transfer = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['name,description\\nDropped,from a drop\\n'], 'dropped.csv', { type: 'text/csv' }));
      return transfer;
    })()`);
    await page.locator('.drop').dispatchEvent('drop', { dataTransfer: transfer });
    await page.getByLabel('Resource').selectOption('groups');
    const preview = page.getByRole('table', { name: 'First records of the file' });
    await eventually(() => preview.getByRole('row').nth(1).textContent()).toContain('Dropped');
    await eventually(() => page.getByLabel('Field for column name').inputValue()).toBe('name');
    expect(await page.getByText('dropped.csv').first().textContent()).toContain('dropped.csv');
  });
});

describe('console: undo', () => {
  it('an import that changed records has an Undo button that asks first, naming the counts', async () => {
    const { info } = await harness.pipeline.run(
      csv(
        ['username', 'email'],
        [
          ['undo.one', 'one@example.com'],
          ['undo.two', 'two@example.com'],
        ],
      ),
      { resource: 'users', mode: 'create' },
    );
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/${encodeURIComponent(info.id)}`);
    const undo = page.getByRole('button', { name: 'Undo 2 changes' });
    await undo.waitFor();

    // declined: nothing happens
    const questions: string[] = [];
    page.once('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.dismiss();
    });
    await undo.click();
    await eventually(() => questions.length).toBe(1);
    expect(questions[0]).toContain(
      `Undo ${info.id}? A new import will delete the 2 records it created`,
    );
    expect(harness.pipeline.sandbox.store.userByName('undo.one')).toBeDefined();

    page.once('dialog', (dialog) => void dialog.accept());
    await undo.click();
    await page.waitForURL((url) => !url.hash.endsWith(encodeURIComponent(info.id)));
    await page
      .locator('.summary')
      .getByText('completed', { exact: true })
      .waitFor({ timeout: 60_000 });
    expect(harness.pipeline.sandbox.store.userByName('undo.one')).toBeUndefined();
    expect(harness.pipeline.sandbox.store.userByName('undo.two')).toBeUndefined();
    expect(harness.problems).toEqual([]);
  }, 120_000);
});
