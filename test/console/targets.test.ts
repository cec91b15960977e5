/**
 * The console with three targets (the pipeline's sandbox as `default`, `second`, and a
 * read-only `archive`): work started on a picked target lands on that server only and its pages
 * name it; a read-only target only takes dry runs and its refusal of a write is shown; the
 * Targets view lists them and checks them live.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { listSchedules } from '../../src/queue/schedules.js';
import { securityOf } from '../../src/app/security.js';
import { scimRequest } from '../helpers/scim-request.js';
import { csv } from '../helpers/pipeline.js';
import { bundleText, seedSource } from '../migrate/migrate-fixture.js';
import { eventually, signIn, startConsoleHarness, TOKEN, type ConsoleHarness } from './harness.js';

let harness: ConsoleHarness;
let second: RunningSandbox;
let archive: RunningSandbox;
let dir: string;
/** The archive's writes once seeded: porter must add none. */
let archiveWrites: number;

const writes = (sandbox: RunningSandbox): number => {
  const { PUT, POST, DELETE } = sandbox.store.stats.requests;
  return PUT + POST + DELETE;
};

/** The URL a target is shown with (GET /v1/targets). */
const shownUrl = (name: string): string =>
  harness.pipeline.context.targets.require(name).summary.url;

beforeAll(async () => {
  second = await startSandbox({ port: 0 });
  archive = await startSandbox({ port: 0 });
  await seedSource(archive.url, { groups: 2, usersPerGroup: 2, aclsPerGroup: 1, tag: 'arc' });
  archiveWrites = writes(archive);
  dir = await mkdtemp(join(tmpdir(), 'porter-console-targets-'));
  const targetsFile = join(dir, 'targets.json');
  await writeFile(
    targetsFile,
    JSON.stringify({
      second: { url: second.url, description: 'the second sandbox' },
      archive: { url: archive.url, readOnly: true },
    }),
  );
  harness = await startConsoleHarness({ env: { PORTER_TARGETS_FILE: targetsFile } });
  await harness.pipeline.run(csv(['username', 'email'], [['main.one', 'main@example.com']]), {
    resource: 'users',
    mode: 'create',
  });
}, 120_000);
afterAll(async () => {
  await harness?.close();
  await second?.close();
  await archive?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function newImport(page: Page, name: string, rows: string[][]): Promise<void> {
  await page.goto(`${harness.baseUrl}/console/#/imports/new`);
  await page.getByRole('heading', { name: 'New import' }).waitFor();
  await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
    name,
    mimeType: 'text/csv',
    buffer: Buffer.from(csv(['username', 'email'], rows)),
  });
  await page.getByLabel('Mode').selectOption('create');
  await page.getByRole('table', { name: 'First records of the file' }).waitFor();
}

/** Width the page needs beyond the viewport (0 when nothing sticks out sideways). */
function overflow(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
}

/** The text of a fact (dt/dd) on a detail page. */
function fact(page: Page, name: string) {
  return page.locator('.facts dt', { hasText: new RegExp(`^${name}$`) }).locator('+ dd');
}

describe('console: targets', () => {
  it('imports into the target picked, onto that server only, and names it on every page', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await newImport(page, 'second.csv', [
      ['second.one', 'one@example.com'],
      ['second.two', 'two@example.com'],
    ]);
    const picker = page.getByLabel('Target', { exact: true });
    // every target is offered, `default` first chosen, the read-only one marked
    expect(await picker.inputValue()).toBe('default');
    const options = await picker.locator('option').allTextContents();
    expect(options).toEqual(
      expect.arrayContaining([
        `default — ${shownUrl('default')}`,
        `second — ${shownUrl('second')}`,
        `archive — ${shownUrl('archive')} (read-only)`,
      ]),
    );
    await picker.selectOption('second');
    await page.getByRole('button', { name: 'Start import' }).click();

    const heading = page.getByRole('heading', { level: 1, name: /^Import imp_/ });
    await heading.waitFor();
    const importId = (await heading.textContent())!.replace('Import ', '');
    await eventually(() => page.locator('.facts .badge').first().textContent()).toBe('completed');
    expect(await fact(page, 'Target').textContent()).toBe(`second (${shownUrl('second')})`);

    // on the second sandbox, and on no other
    expect(second.store.userByName('second.one')).toBeDefined();
    expect(second.store.userByName('second.two')).toBeDefined();
    expect(harness.pipeline.sandbox.store.userByName('second.one')).toBeUndefined();
    expect(archive.store.userByName('second.one')).toBeUndefined();
    expect(writes(archive)).toBe(archiveWrites);

    // the list names each import's target
    await page.getByRole('link', { name: 'Imports', exact: true }).click();
    const list = page.getByRole('table', { name: 'Imports, newest first' });
    await eventually(() =>
      list.getByRole('row', { name: new RegExp(importId) }).textContent(),
    ).toContain('second');
    // newest first: the second target's import, then the one the test started on `default`
    // columns: Import, Source, By, Target, …
    const targetCell = (row: number) => list.getByRole('row').nth(row).getByRole('cell').nth(3);
    expect(await targetCell(1).textContent()).toBe('second');
    expect(await targetCell(2).textContent()).toBe('default');

    // an export of the second target reads that server
    await page.getByRole('link', { name: 'Exports' }).click();
    await page.getByRole('heading', { name: 'Exports', level: 1 }).waitFor();
    await page.locator('#export-target').selectOption('second');
    await page.locator('#export-resource').selectOption('users');
    await page.getByRole('button', { name: 'Run export' }).click();
    const exports = page.getByRole('table', { name: 'Exports, newest first' });
    const file = exports.getByRole('button', { name: 'users.csv' });
    await file.waitFor({ timeout: 60_000 });
    expect(await exports.getByRole('row').nth(1).textContent()).toContain(shownUrl('second'));
    const [download] = await Promise.all([page.waitForEvent('download'), file.click()]);
    const text = await readFile((await download.path())!, 'utf8');
    expect(text).toContain('second.one');
    expect(text).not.toContain('main.one');

    // a schedule records its target
    await page.getByLabel('Name').fill('second-nightly');
    await page.getByLabel('Cron').fill('0 2 * * *');
    await page.locator('#schedule-target').selectOption('second');
    await page.getByRole('button', { name: 'Add schedule' }).click();
    const schedule = page
      .getByRole('table', { name: 'Schedules' })
      .getByRole('row', { name: /second-nightly/ });
    await eventually(() => schedule.textContent()).toContain('second');
    const stored = await listSchedules(harness.pipeline.context.exportQueue);
    expect(stored.map((item) => item.request?.target)).toEqual(['second']);
    await page.getByRole('button', { name: 'Remove schedule second-nightly' }).click();
    await page.getByText('No schedules.').waitFor();
    expect(harness.problems).toEqual([]);
  });

  it('offers only a dry run on a read-only target, and shows its refusal of a write', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await newImport(page, 'archive.csv', [['archive.one', 'archive@example.com']]);
    const dryRun = page.getByLabel('Dry run (plan only, nothing written)');
    expect(await dryRun.isChecked()).toBe(false);
    await page.getByLabel('Target', { exact: true }).selectOption('archive');
    expect(await dryRun.isChecked()).toBe(true);
    expect(await dryRun.isDisabled()).toBe(true);
    await page
      .getByText('Read-only: nothing is written to it; only a dry run can be started.')
      .waitFor();
    await page.getByRole('button', { name: 'Start dry run' }).click();

    await page.getByRole('heading', { level: 1, name: /^Import imp_/ }).waitFor();
    await page.getByRole('heading', { name: 'Plan', exact: true }).waitFor();
    expect(await fact(page, 'Target').textContent()).toBe(`archive (${shownUrl('archive')})`);
    expect(await fact(page, 'Mode').textContent()).toBe('create (dry run)');

    // carrying the plan out writes: the dialog asks for the counts, the API refuses the write,
    // and the page says why
    await eventually(() => page.locator('.plan-writes').textContent()).toBe('Writes: create 1');
    await page.getByRole('button', { name: 'Apply plan…' }).click();
    const dialog = page.getByRole('dialog', { name: /Apply the plan of/ });
    await dialog.waitFor();
    const go = dialog.getByRole('button', { name: 'Apply: create 1' });
    expect(await go.isDisabled()).toBe(true);
    await dialog.getByLabel('Type “create 1” to confirm').fill('create 1');
    await eventually(() => go.isDisabled()).toBe(false);
    await go.click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.textContent();
    expect(text).toContain('Refused: the target is read-only, nothing was written.');
    expect(text).toContain('PORTER_TARGET_READ_ONLY');
    expect(text).toContain('"archive"');
    expect(archive.store.userByName('archive.one')).toBeUndefined();
    expect(writes(archive)).toBe(archiveWrites);
    expect(harness.problems).toEqual([]);
  });

  it('starts a migration on the target picked (a dry run on the read-only one) and names it', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.getByRole('link', { name: 'Migrations' }).click();
    await page.getByRole('heading', { name: 'Start a migration' }).waitFor();
    await page.getByLabel('Bundle file (JSON)').setInputFiles({
      name: 'archive-bundle.json',
      mimeType: 'application/json',
      buffer: Buffer.from(await bundleText(archive.url)),
    });
    const dryRun = page.getByLabel('Dry run: plan only, write nothing');
    await page.getByLabel('Target', { exact: true }).selectOption('archive');
    expect(await dryRun.isChecked()).toBe(true);
    expect(await dryRun.isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Start migration' }).click();

    const heading = page.getByRole('heading', { level: 1, name: /^Migration mig_/ });
    await heading.waitFor();
    const migrationId = (await heading.textContent())!.replace('Migration ', '');
    expect(await fact(page, 'Target').textContent()).toBe(`archive (${shownUrl('archive')})`);
    await eventually(() => page.locator('.facts .badge').first().textContent(), 120_000).toMatch(
      /^completed/,
    );
    expect(writes(archive)).toBe(archiveWrites);

    await page.getByRole('link', { name: 'All migrations' }).click();
    const row = page
      .getByRole('table', { name: 'Migrations, newest first' })
      .getByRole('row', { name: new RegExp(migrationId) });
    await eventually(() => row.textContent()).toContain('archive');
    expect(harness.problems).toEqual([]);
  });

  it('POST /v1/migrations takes `target`: a write on the read-only one and an unknown one are refused', async () => {
    const bundle = await bundleText(archive.url);
    const start = async (query: string) => {
      const answer = await fetch(`${harness.baseUrl}/v1/migrations?${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: bundle,
      });
      return { status: answer.status, body: (await answer.json()) as { error?: { code: string } } };
    };
    const readOnly = await start('target=archive&mode=upsert');
    expect(readOnly.status).toBeGreaterThanOrEqual(400);
    expect(readOnly.body.error?.code).toBe('PORTER_TARGET_READ_ONLY');
    const unknown = await start('target=nowhere&mode=upsert');
    expect(unknown.body.error?.code).toBe('PORTER_TARGET_UNKNOWN');
    expect(writes(archive)).toBe(archiveWrites);
  });

  it('lists the targets and checks one live, with its counts', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.getByRole('link', { name: 'Targets' }).click();
    const targets = page.getByRole('table', { name: 'Targets' });
    await targets.waitFor();
    const rowOf = (name: string) => targets.locator(`tr[data-target="${name}"]`);
    for (const name of ['default', 'second', 'archive']) {
      expect(await rowOf(name).textContent()).toContain(shownUrl(name));
    }
    expect(await rowOf('archive').textContent()).toContain('read-only');
    expect(await rowOf('second').textContent()).not.toContain('read-only');
    expect(await rowOf('second').textContent()).toContain('the second sandbox');

    for (const [name, sandbox] of [
      ['archive', archive],
      ['second', second],
    ] as const) {
      await page.getByRole('button', { name: `Check target ${name}` }).click();
      const result = rowOf(name).locator('.check-result');
      await eventually(() => result.textContent()).toMatch(/^reachable · \d+ ms/);
      const counts = sandbox.store.counts();
      expect(await result.textContent()).toContain(
        `${counts.users} users · ${counts.groups} groups · ${counts.acls} ACLs`,
      );
    }
    expect(archive.store.counts()).toEqual({ users: 4, groups: 2, acls: 2 });
    expect(harness.problems).toEqual([]);
  });

  it("links each target's imports and what SCIM changed on it, with who sent it", async () => {
    // an identity provider's token creates a user on `second` through SCIM
    const made = { at: new Date().toISOString(), actionId: 'console', who: { name: 'test' } };
    const entra = await securityOf(harness.pipeline.context).tokens.create(
      { name: 'entra-second', role: 'operator', targets: ['second'], scimOnly: true },
      made,
    );
    const created = await scimRequest(
      `${harness.baseUrl}/scim/v2/second/Users`,
      entra.token,
      'POST',
      { userName: 'scim.hire' },
    );
    expect(created.status, created.text).toBe(201);

    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.getByRole('link', { name: 'Targets' }).click();
    await page.getByRole('link', { name: 'SCIM changes of second' }).click();
    await page.getByText('Only the imports of target second from source scim').waitFor();
    const list = page.getByRole('table', { name: 'Imports, newest first' });
    await list.waitFor();
    const rows = list.getByRole('row');
    // a header and the one hour of SCIM changes
    await eventually(() => rows.count()).toBe(2);
    // columns: Import, Source, By, Target, …
    const cells = rows.nth(1).getByRole('cell');
    expect(await cells.nth(1).textContent()).toBe('scim');
    expect(await cells.nth(2).textContent()).toBe('token:entra-second');
    expect(await cells.nth(3).textContent()).toBe('second');

    // all of the target's imports; none of `archive` is SCIM's
    await page.getByRole('link', { name: 'Targets' }).click();
    await page.getByRole('link', { name: 'Imports of second' }).click();
    await eventually(() => list.getByRole('row').count()).toBeGreaterThan(2);
    for (const cell of await list.locator('tr td:nth-child(4)').allTextContents())
      expect(cell).toBe('second');
    await page.goto(`${harness.baseUrl}/console/#/imports?source=scim&target=archive`);
    await page.getByText('None.').waitFor();
    expect(harness.problems).toEqual([]);
  });

  it('holds its layout on a phone: the picker and the targets table stay in the page', async () => {
    const page = await harness.newPage({ width: 390, height: 844 });
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/new`);
    await page.getByLabel('Target', { exact: true }).selectOption('archive');
    expect(await overflow(page)).toBe(0);
    await page.goto(`${harness.baseUrl}/console/#/migrations`);
    await page.getByLabel('Target', { exact: true }).selectOption('archive');
    expect(await overflow(page)).toBe(0);
    await page.goto(`${harness.baseUrl}/console/#/exports`);
    await page.locator('#export-target').selectOption('archive');
    await page.locator('#schedule-target').selectOption('archive');
    expect(await overflow(page)).toBe(0);
    await page.goto(`${harness.baseUrl}/console/#/targets`);
    await page.getByRole('button', { name: 'Check target second' }).click();
    await page.locator('.check-result', { hasText: 'reachable' }).waitFor();
    expect(await overflow(page)).toBe(0);
  });
});
