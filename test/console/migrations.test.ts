import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { bundleText, seedSource } from '../migrate/migrate-fixture.js';
import { eventually, signIn, startConsoleHarness, TOKEN, type ConsoleHarness } from './harness.js';

const HOSTILE = '<img src=x onerror=window.__xss=1>';
let harness: ConsoleHarness;
let source: RunningSandbox;
let bundle: string;

beforeAll(async () => {
  harness = await startConsoleHarness();
  source = await startSandbox({ port: 0 });
  await seedSource(source.url, { groups: 2, usersPerGroup: 3, aclsPerGroup: 1, tag: 'cm' });
  bundle = await bundleText(source.url);
}, 120_000);
afterAll(async () => {
  await harness?.close();
  await source?.close();
});

/** The text of a stage's row on a migration page. */
function stageRow(page: Page, stage: string) {
  return page.locator(`tr[data-stage="${stage}"]`);
}

function overflow(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
}

describe('console: migrations', () => {
  it('starts a migration from a bundle file and follows its four stages to their end', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.getByRole('link', { name: 'Migrations' }).click();
    await page.getByRole('heading', { name: 'Migrations', level: 1 }).waitFor();
    await page.getByText('No migrations yet.').waitFor();

    await page.getByLabel('Bundle file (JSON)').setInputFiles({
      name: 'bundle.json',
      mimeType: 'application/json',
      buffer: Buffer.from(bundle),
    });
    await page.getByLabel('Mode').selectOption('create');
    await page.getByRole('button', { name: 'Start migration' }).click();

    const heading = page.getByRole('heading', { level: 1, name: /^Migration mig_/ });
    await heading.waitFor();
    const migrationId = (await heading.textContent())!.replace('Migration ', '');

    const expected = { groups: 2, acls: 2, users: 6, memberships: 2 };
    for (const [stage, count] of Object.entries(expected)) {
      await eventually(() => stageRow(page, stage).textContent(), 120_000).toContain(
        `${count} succeeded`,
      );
      await eventually(() => stageRow(page, stage).locator('.badge').textContent()).toBe('done');
    }
    await eventually(() => page.locator('.facts .badge').first().textContent()).toBe('completed');
    expect(await stageRow(page, 'users').textContent()).toContain('6 create');
    expect(await stageRow(page, 'groups').textContent()).toContain('2 of 2 records');

    // the target holds what the source had, memberships included
    const target = harness.pipeline.sandbox.store;
    const users = target.users().filter((user) => user.username?.startsWith('cm.'));
    expect(users).toHaveLength(6);
    const members = source.store.groupByName('cm group 0')!.users!;
    expect(members.length).toBeGreaterThan(0);
    expect(target.groupByName('cm group 0')!.users).toHaveLength(members.length);

    // the id map downloads: a row per group, ACL and user, source id to target id
    const [idMap] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download id map (CSV)' }).click(),
    ]);
    expect(idMap.suggestedFilename()).toBe(`${migrationId}-id-map.csv`);
    const idMapText = await readFile((await idMap.path())!, 'utf8');
    const idMapLines = idMapText.trim().split('\n');
    expect(idMapLines[0]).toBe('resource,sourceId,targetId,key');
    expect(idMapLines).toHaveLength(1 + 2 + 2 + 6);

    // the list shows it, ended
    await page.getByRole('link', { name: 'All migrations' }).click();
    const list = page.getByRole('table', { name: 'Migrations, newest first' });
    const row = list.getByRole('row', { name: new RegExp(migrationId) });
    await row.waitFor();
    expect(await row.textContent()).toContain('completed');
    expect(await row.textContent()).toContain('create');

    // a stage links to its import's page
    await row.getByRole('link', { name: migrationId }).click();
    const usersLink = page.getByRole('link', { name: /^Users import imp_/ });
    await usersLink.waitFor();
    const importId = (await usersLink.textContent())!;
    await usersLink.click();
    await page.getByRole('heading', { level: 1, name: `Import ${importId}` }).waitFor();
    await eventually(() => page.locator('.facts').textContent()).toContain('6 succeeded');
    expect(harness.problems).toEqual([]);
  }, 240_000);

  it('shows server text as text, and holds its layout at 1280×800 and 390×844', async () => {
    const hostileBundle = bundle.replace(JSON.stringify(source.url), JSON.stringify(HOSTILE));
    expect(hostileBundle).not.toBe(bundle);
    const answer = await fetch(`${harness.baseUrl}/v1/migrations?mode=upsert&dryRun=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: hostileBundle,
    });
    expect(answer.status).toBe(202);
    const { id } = (await answer.json()) as { id: string };

    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      const page = await harness.newPage(viewport);
      await signIn(page, harness.baseUrl);
      await page.goto(`${harness.baseUrl}/console/#/migrations/${id}`);
      await page.getByRole('heading', { level: 1, name: `Migration ${id}` }).waitFor();
      // a dry run plans every stage: the records are on the target already, nothing to change
      await eventually(() => stageRow(page, 'memberships').textContent(), 120_000).toContain(
        'planned',
      );
      await eventually(() => page.locator('.facts').textContent()).toContain(HOSTILE);
      expect(await page.locator('.facts').textContent()).toContain('dry run');
      expect(await page.locator('.facts img').count()).toBe(0);
      expect(await page.evaluate('window.__xss')).toBeUndefined();
      expect(await overflow(page)).toBe(0);

      await page.goto(`${harness.baseUrl}/console/#/migrations`);
      const list = page.getByRole('table', { name: 'Migrations, newest first' });
      await list.waitFor();
      // newest first: the dry run, then the migration of the test before
      await eventually(() => list.locator('tbody tr').count()).toBe(2);
      expect(await list.locator('tbody tr').first().textContent()).toContain(id);
      expect(await overflow(page)).toBe(0);
    }
    expect(harness.problems).toEqual([]);
  }, 240_000);

  it('shows why a file that is not a bundle was refused, and the failed migration', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/migrations`);
    await page.getByLabel('Bundle file (JSON)').setInputFiles({
      name: 'not-a-bundle.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ porter: 'bundle', version: 2, groups: [] })),
    });
    await page.getByRole('button', { name: 'Start migration' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toMatch(/bundle/i);

    const list = page.getByRole('table', { name: 'Migrations, newest first' });
    await eventually(() => list.locator('tbody tr').count()).toBe(3);
    // found by its state, not its place: two migrations made in one millisecond may list in
    // either order, and a poll may show it before it is marked failed
    const refused = list.getByRole('row', { name: /failed/ });
    await eventually(() => refused.count()).toBe(1);
    await refused.getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: /^Migration mig_/ }).waitFor();
    await eventually(() => page.locator('.facts').textContent()).toContain('Reason');
    expect(await page.locator('.facts .badge').first().textContent()).toBe('failed');
    expect(harness.problems).toEqual([]);
  }, 120_000);
});
