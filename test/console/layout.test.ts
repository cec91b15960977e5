import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv } from '../helpers/pipeline.js';
import { signIn, startConsoleHarness, type ConsoleHarness } from './harness.js';

let harness: ConsoleHarness;

beforeAll(async () => {
  harness = await startConsoleHarness();
  await harness.pipeline.run(
    csv(['username', 'email'], [['layout.one', 'a-rather-long-address.for.layout@example.com']]),
    { resource: 'users', mode: 'create' },
  );
});
afterAll(async () => {
  await harness?.close();
});

/** Width the page needs beyond the viewport (0 when nothing sticks out sideways). */
function overflow(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
}

/** Form controls without a label or an accessible name. */
function unlabelled(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('input, select, textarea')]
    .filter((element) => element.labels.length === 0 && !element.getAttribute('aria-label'))
    .map((element) => element.id || element.outerHTML)`);
}

async function visitAll(page: Page): Promise<void> {
  await signIn(page, harness.baseUrl);
  await page.getByRole('table', { name: 'Imports, newest first' }).waitFor();
  expect(await overflow(page)).toBe(0);

  await page.goto(`${harness.baseUrl}/console/#/imports/new`);
  await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
    name: 'wide.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(
      csv(
        ['username', 'email', 'firstName', 'lastName', 'company', 'dept', 'position', 'city'],
        [['wide.one', 'wide@example.com', 'Wide', 'One', 'Acme', 'Sales', 'Lead', 'Berlin']],
      ),
    ),
  });
  await page.getByRole('table', { name: 'First records of the file' }).waitFor();
  expect(await overflow(page)).toBe(0);
  expect(await unlabelled(page)).toEqual([]);

  await page.goto(`${harness.baseUrl}/console/#/exports`);
  await page.getByRole('heading', { name: 'Schedules' }).waitFor();
  expect(await overflow(page)).toBe(0);
  expect(await unlabelled(page)).toEqual([]);

  await page.goto(`${harness.baseUrl}/console/#/migrations`);
  await page.getByRole('heading', { name: 'Start a migration' }).waitFor();
  await page.getByText('No migrations yet.').waitFor();
  expect(await overflow(page)).toBe(0);
  expect(await unlabelled(page)).toEqual([]);

  await page.goto(`${harness.baseUrl}/console/#/targets`);
  await page.getByRole('button', { name: 'Check target default' }).click();
  await page.locator('.check-result', { hasText: 'reachable' }).waitFor();
  expect(await overflow(page)).toBe(0);
}

describe('console: layout and keyboard', () => {
  it('holds at 1280×800 with every control labelled', async () => {
    await visitAll(await harness.newPage({ width: 1280, height: 800 }));
  });

  it('holds at 390×844: wide tables scroll inside their own box', async () => {
    await visitAll(await harness.newPage({ width: 390, height: 844 }));
  });

  it('is usable from the keyboard, with a visible focus ring', async () => {
    const page = await harness.newPage();
    await page.goto(`${harness.baseUrl}/console/`);
    // the token field has the focus on arrival (once the page has asked for a session)
    await page.locator('#token:focus').waitFor();
    await page.keyboard.type('console-browser-token-0123456789');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Imports', level: 1 }).waitFor();
    // the page's content has the focus after each navigation; the menu is just before it
    const focused: { text: string; outline: string }[] = [];
    for (let step = 0; step < 9; step++) {
      await page.keyboard.press('Shift+Tab');
      focused.push(
        await page.evaluate(`(() => {
          const element = document.activeElement;
          return { text: element.textContent.trim(), outline: getComputedStyle(element).outlineStyle };
        })()`),
      );
    }
    expect(focused.map((item) => item.text)).toEqual([
      'Sign out',
      'Notifications',
      'Audit',
      'Targets',
      'Migrations',
      'Exports',
      'New import',
      'Imports',
      'Skip to content',
    ]);
    for (const item of focused) expect(item.outline).not.toBe('none');
    // Enter on the focused link follows it
    await page.getByRole('link', { name: 'Exports' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Exports', level: 1 }).waitFor();
  });
});

/** Lines a cell's text takes: its height over its line height. */
function lines(page: Page, selector: string): Promise<number> {
  return page.evaluate(`(() => {
    const element = document.querySelector(${JSON.stringify(selector)});
    const style = getComputedStyle(element);
    const range = document.createRange();
    range.selectNodeContents(element);
    return Math.round(range.getBoundingClientRect().height / parseFloat(style.lineHeight));
  })()`);
}

describe('console: text that should not wrap word by word', () => {
  it('an import id is one line, and a preview error a few, at 1280×800 and 390×844', async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      const page = await harness.newPage(viewport);
      await signIn(page, harness.baseUrl);
      await page.getByRole('table', { name: 'Imports, newest first' }).waitFor();
      expect(await lines(page, 'table.imports tbody tr td:first-child a')).toBe(1);

      await page.goto(`${harness.baseUrl}/console/#/imports/new`);
      await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
        name: 'bad.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from(
          csv(
            ['username', 'email', 'firstName', 'lastName', 'company', 'dept', 'city'],
            [['bad.one', 'bad', 'Bad', 'One', 'Acme', 'Sales', 'Berlin']],
          ),
        ),
      });
      await page.getByRole('table', { name: 'First records of the file' }).waitFor();
      expect(await lines(page, 'table.preview tbody tr td:nth-child(3)')).toBeLessThanOrEqual(4);
    }
  });
});
