/**
 * The console's new import page with a directory source (a real slapd) as the origin of the
 * rows: the configured sources are listed, a sync started from one completes against the
 * sandbox, and a source that cannot be read says why on the page, with no import stored.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_DN, PORTER_DN, personLdif, startSlapd, type TestSlapd } from '../helpers/slapd.js';
import { eventually, signIn, startConsoleHarness, type ConsoleHarness } from './harness.js';

const MAPPING = {
  columns: { uid: 'username', givenName: 'firstName', sn: 'lastName', mail: 'email' },
  ignore: ['dn', 'entryUUID', 'directoryGroups'],
};

let slapd: TestSlapd;
let harness: ConsoleHarness;
let dir: string;

beforeAll(async () => {
  slapd = await startSlapd({
    ldif: ['ann', 'bob', 'cat']
      .map((uid) => personLdif(`consrc.${uid}`, { givenName: uid }))
      .join('\n\n'),
  });
  dir = await mkdtemp(join(tmpdir(), 'porter-console-source-'));
  await writeFile(join(dir, 'porter.secret'), 'porter-secret\n');
  await writeFile(join(dir, 'wrong.secret'), 'not-it\n');
  const source = (secret: string) => ({
    kind: 'ldap',
    url: slapd.url,
    bindDN: PORTER_DN,
    password: { file: join(dir, secret) },
    baseDN: `ou=people,${BASE_DN}`,
    attributes: ['uid', 'givenName', 'sn', 'mail'],
    pageSize: 2,
  });
  await writeFile(
    join(dir, 'sources.json'),
    JSON.stringify({ people: source('porter.secret'), wrong: source('wrong.secret') }),
  );
  await writeFile(join(dir, 'mapping.json'), JSON.stringify(MAPPING));
  harness = await startConsoleHarness({ env: { PORTER_SOURCES_FILE: join(dir, 'sources.json') } });
}, 60_000);
afterAll(async () => {
  await harness?.close();
  await slapd?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('console: an import from a directory source', () => {
  it('lists the sources and syncs the directory from one into the target', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.getByRole('link', { name: 'New import' }).first().click();
    await page.getByRole('heading', { name: 'New import' }).waitFor();

    await page.getByLabel('From a directory source').check();
    expect(await page.getByLabel('File (CSV, JSON or NDJSON)').isVisible()).toBe(false);
    expect(await page.getByRole('heading', { name: 'Preview' }).isVisible()).toBe(false);
    expect(await page.getByLabel('Delimiter').isVisible()).toBe(false);
    expect(await page.getByLabel('Resource').locator('option[value="acls"]').isDisabled()).toBe(
      true,
    );
    const picker = page.getByLabel('Source', { exact: true });
    const options = await picker.locator('option').allTextContents();
    expect(options).toEqual([`people — ${slapd.url} (users)`, `wrong — ${slapd.url} (users)`]);
    expect(await page.locator('main').innerText()).not.toContain('porter-secret');

    await page.getByLabel('Mapping file of the source').setInputFiles(join(dir, 'mapping.json'));
    await eventually(() => page.getByLabel('Mapping (JSON)').inputValue()).toContain('username');
    await page.getByLabel('Mode').selectOption('sync');
    await page.getByLabel('Only keys matching').fill('^consrc\\.');
    await page.getByRole('button', { name: 'Start import' }).click();
    await page.waitForURL(/#\/imports\/(?!new$)[^/]+$/);
    const importId = decodeURIComponent(page.url().split('#/imports/')[1]!);
    await page
      .locator('.summary')
      .getByText('completed', { exact: true })
      .waitFor({ timeout: 60_000 });

    const info = await harness.pipeline.context.store.get(importId);
    expect(info?.options.mode).toBe('sync');
    expect(info?.options.source).toMatchObject({ name: 'people', entries: 3 });
    for (const uid of ['ann', 'bob', 'cat']) {
      expect(harness.pipeline.sandbox.store.userByName(`consrc.${uid}`)?.firstName).toBe(uid);
    }
    expect(harness.problems).toEqual([]);
  }, 90_000);

  it('a source that cannot be read says why, and no import is stored', async () => {
    const before = (await harness.pipeline.context.store.list({ limit: 1000 })).length;
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/new`);
    await page.getByLabel('From a directory source').check();
    await page.getByLabel('Source', { exact: true }).selectOption('wrong');
    await page.getByLabel('Mapping (JSON)').fill(JSON.stringify(MAPPING));
    await page.getByLabel('Mode').selectOption('upsert');
    await page.getByRole('button', { name: 'Start import' }).click();
    await page.getByText(/invalid credentials/).waitFor();
    expect(page.url()).toMatch(/#\/imports\/new$/);
    expect(await page.locator('main').innerText()).not.toContain('not-it');
    expect((await harness.pipeline.context.store.list({ limit: 1000 })).length).toBe(before);
    expect(harness.problems).toEqual([]);
  }, 60_000);
});
