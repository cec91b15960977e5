import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { compileScopePattern } from '../../src/sync/sync-options.js';
import { csv } from '../helpers/pipeline.js';
import {
  approveThroughDialog,
  eventually,
  signIn,
  startConsoleHarness,
  type ConsoleHarness,
} from './harness.js';

let harness: ConsoleHarness;

beforeAll(async () => {
  harness = await startConsoleHarness();
  await harness.pipeline.run(
    csv(
      ['username', 'email'],
      [
        ['sync.ann', 'ann@old.example.com'],
        ['sync.bob', 'bob@example.com'],
        ['sync.cid', 'cid@example.com'],
      ],
    ),
    { resource: 'users', mode: 'create' },
  );
});
afterAll(async () => {
  await harness?.close();
});

describe('console: a sync held for approval', () => {
  it('shows the held plan and approves it from the page', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/new`);
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'hr.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv(['username', 'email'], [['sync.ann', 'ann@new.example.com']])),
    });
    await page.getByLabel('Mode').selectOption('sync');
    await page.getByLabel('Records the file leaves out').selectOption('lock');
    await page.getByLabel('Most locks and deletes without approval').fill('0');
    await eventually(() =>
      page.getByRole('table', { name: 'First records of the file' }).getByRole('row').count(),
    ).toBe(2);
    await page.getByRole('button', { name: 'Start import' }).click();
    await page.waitForURL(/#\/imports\/(?!new$)[^/]+$/);
    const heldId = decodeURIComponent(page.url().split('#/imports/')[1]!);

    await page
      .locator('.summary')
      .getByText('held for approval', { exact: true })
      .waitFor({ timeout: 60_000 });
    await page.getByRole('heading', { name: 'Plan awaiting approval' }).waitFor();
    const plan = page.getByRole('table', { name: 'Planned records and their changes' });
    const removals = page.getByRole('table', { name: 'Locks and deletes' });
    const bob = removals.getByRole('row', { name: /sync\.bob/ });
    await eventually(() => bob.textContent()).toContain('lock');
    await eventually(() => bob.textContent()).toContain('server only');
    const ann = plan.getByRole('row', { name: /sync\.ann/ });
    await eventually(() => ann.locator('ins').textContent()).toBe('ann@new.example.com');
    const actions = page.getByRole('table', { name: 'Records per action' });
    await eventually(() => actions.getByRole('row', { name: /lock/ }).textContent()).toBe('lock2');
    // nothing written while it is held
    expect((await harness.pipeline.context.store.get(heldId))?.state).toBe('held');

    // four eyes: whoever started the sync cannot approve it
    await approveThroughDialog(page, 'lock 2, update 1');
    await page.getByText(/another principal with the approver role must approve it/).waitFor();
    expect((await harness.pipeline.context.store.get(heldId))?.state).toBe('held');
    const second = await securityOf(harness.pipeline.context).tokens.create(
      { name: 'second-approver', role: 'approver' },
      { at: new Date().toISOString(), actionId: 'test', who: { name: 'test' } },
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, harness.baseUrl, second.token);
    await page.goto(`${harness.baseUrl}/console/#/imports/${encodeURIComponent(heldId)}`);
    await approveThroughDialog(page, 'lock 2, update 1');
    await page.waitForURL((url) => !url.hash.endsWith(encodeURIComponent(heldId)));
    const applicationId = decodeURIComponent(page.url().split('#/imports/')[1]!);
    await page
      .locator('.summary')
      .getByText('completed', { exact: true })
      .waitFor({ timeout: 60_000 });
    const results = await harness.pipeline.results(applicationId);
    const byKey = Object.fromEntries(results.map((result) => [result.key, result]));
    expect(byKey['sync.ann']).toMatchObject({ status: 'succeeded', action: 'update' });
    expect(byKey['sync.bob']).toMatchObject({ status: 'succeeded', action: 'lock' });
    expect(byKey['sync.cid']).toMatchObject({ status: 'succeeded', action: 'lock' });
    expect((await harness.pipeline.context.store.get(heldId))?.state).toBe('completed');
    expect(harness.problems).toEqual([]);
  });
});

describe('console: a held plan leads with its locks and deletes', () => {
  it('shows the counts, then every lock, then the updates; Approve asks for the counts typed', async () => {
    const { pipeline } = harness;
    const users = Array.from(
      { length: 120 },
      (_, index) => `many.${String(index).padStart(3, '0')}`,
    );
    await pipeline.run(
      csv(
        ['username', 'email'],
        users.map((username) => [username, `${username}@old.example.com`]),
      ),
      { resource: 'users', mode: 'create' },
    );
    // 110 updates come first in the file's order; the 10 users it leaves out are to be locked
    const kept = users.slice(0, 110);
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/new`);
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'many.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(
        csv(
          ['username', 'email'],
          kept.map((username) => [username, `${username}@new.example.com`]),
        ),
      ),
    });
    await page.getByLabel('Mode').selectOption('sync');
    await page.getByLabel('Records the file leaves out').selectOption('lock');
    await page.getByLabel('Only keys matching').fill('^many\\.');
    await page.getByLabel('Most locks and deletes without approval').fill('5');
    await eventually(() =>
      page.getByRole('table', { name: 'First records of the file' }).getByRole('row').count(),
    ).toBeGreaterThan(1);
    await page.getByRole('button', { name: 'Start import' }).click();
    await page.waitForURL(/#\/imports\/(?!new$)[^/]+$/);
    const heldId = decodeURIComponent(page.url().split('#/imports/')[1]!);
    await page
      .getByRole('heading', { name: 'Plan awaiting approval' })
      .waitFor({ timeout: 60_000 });

    // counts first, then the locks (all ten), then the updates
    await eventually(() => page.locator('.plan-writes').textContent()).toBe(
      'Writes: lock 10, update 110',
    );
    const locks = page.getByRole('table', { name: 'Locks and deletes' });
    await eventually(() => locks.locator('tbody tr').count()).toBe(10);
    const lockRows = await locks.locator('tbody tr').allTextContents();
    expect(lockRows.every((row) => row.includes('lock') && row.includes('server only'))).toBe(true);
    expect(lockRows.join(' ')).toContain('many.119');
    expect(await page.locator('#main h3').allTextContents()).toEqual([
      'Locks and deletes (10)',
      'Creates and updates (110)',
    ]);
    const updates = page.getByRole('table', { name: 'Planned records and their changes' });
    expect(await updates.locator('tbody tr').count()).toBe(100);

    // the wrong counts do not approve
    await page.getByRole('button', { name: 'Approve…' }).click();
    const dialog = page.getByRole('dialog', { name: /Approve the plan of/ });
    await dialog.getByLabel('Type “lock 10, update 110” to confirm').fill('update 110');
    expect(
      await dialog.getByRole('button', { name: 'Approve: lock 10, update 110' }).isDisabled(),
    ).toBe(true);
    await dialog.getByRole('button', { name: 'Back' }).click();
    expect((await pipeline.context.store.get(heldId))?.state).toBe('held');

    // four eyes: a second approver approves the sync the first one started
    const second = await securityOf(pipeline.context).tokens.create(
      { name: 'many-approver', role: 'approver' },
      { at: new Date().toISOString(), actionId: 'test', who: { name: 'test' } },
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, harness.baseUrl, second.token);
    await page.goto(`${harness.baseUrl}/console/#/imports/${encodeURIComponent(heldId)}`);
    await approveThroughDialog(page, 'lock 10, update 110');
    await page.waitForURL((url) => !url.hash.endsWith(encodeURIComponent(heldId)));
    const applicationId = decodeURIComponent(page.url().split('#/imports/')[1]!);
    const done = await pipeline.waitFinal(applicationId);
    expect(done.actions).toMatchObject({ lock: 10, update: 110 });
    expect(pipeline.sandbox.store.userByName('many.119')?.status).toBe('Locked');
    expect(harness.problems).toEqual([]);
  });
});

describe('console: a sync scope pattern', () => {
  it('shows an example that is a valid pattern, and refuses a wildcard before uploading', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/new`);
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'scope.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv(['username'], [['scope.ann']])),
    });
    await page.getByLabel('Mode').selectOption('sync');
    const scope = page.getByLabel('Only keys matching');
    const example = (await scope.getAttribute('placeholder'))!.replace(/^e\.g\. /, '');
    expect(() => compileScopePattern(example)).not.toThrow();

    const before = (await harness.pipeline.context.store.list({ limit: 100 })).length;
    await scope.fill('*@example.com');
    await eventually(() =>
      page.getByRole('table', { name: 'First records of the file' }).getByRole('row').count(),
    ).toBe(2);
    await page.getByRole('button', { name: 'Start import' }).click();
    await eventually(() => page.getByRole('alert').first().textContent()).toMatch(
      /Only keys matching: not a regular expression .*not a wildcard/,
    );
    expect(page.url()).toMatch(/#\/imports\/new$/);
    expect((await harness.pipeline.context.store.list({ limit: 100 })).length).toBe(before);
    expect(harness.problems).toEqual([]);
  });
});
