/**
 * Makes the console's screenshots in docs/images/: a sandbox, workers and the API on free
 * ports against REDIS_URL (a fresh key prefix, removed afterwards), sample imports, then
 * headless Debian chromium (CHROMIUM_PATH, default /usr/bin/chromium) on each page.
 *
 *   npx tsx scripts/screenshots.ts
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { chromium, type Page } from 'playwright-core';
import { AdminClient } from '../src/admin/client.js';
import type { ResourceName } from '../src/admin/resources.js';
import { createPorterContext, type PorterContext } from '../src/app/context.js';
import { startImport } from '../src/app/imports.js';
import { requireMigration, startMigration } from '../src/app/migrations.js';
import { startWorkers } from '../src/app/workers.js';
import { loadEnv } from '../src/config/env.js';
import { bundleSource } from '../src/export/bundle.js';
import type { RecordBatches } from '../src/export/export-types.js';
import { buildApiApp } from '../src/http/build-app.js';
import { FINAL_MIGRATION_STATES, type MigrationInfo } from '../src/migrate/migration-model.js';
import type { ImportInfo, ImportOptions } from '../src/model/import.js';
import { startSandbox } from '../src/sandbox/server.js';
import { silentLogger } from '../src/util/logger.js';
import { PROJECT_ROOT } from '../src/util/project-root.js';
import { deleteKeysWithPrefix } from '../src/util/redis.js';

const ROOT = PROJECT_ROOT;
const IMAGES = join(ROOT, 'docs/images');
const TOKEN = `screenshots-${randomUUID()}`;
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const NEW_HIRES = [
  'Login,email,firstName,lastName,dept,primaryGroup,Notes',
  'ada.lovelace,ada@example.com,Ada,Lovelace,Engineering,,starts Monday',
  'alan.turing,alan@example.com,Alan,Turing,Engineering,,',
  'grace.hopper,grace@example.com,Grace,Hopper,Engineering,admins,group name instead of an id',
  'katherine.johnson,katherine@example.com,Katherine,Johnson,Research,,',
  'edsger.dijkstra,edsger@example.com,Edsger,Dijkstra,Research,,',
].join('\n');

async function waitSettled(context: PorterContext, importId: string): Promise<ImportInfo> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const info = await context.store.get(importId);
    if (info?.settled) return info;
    if (Date.now() > deadline) throw new Error(`import ${importId} did not end`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function runImport(
  context: PorterContext,
  text: string,
  options: Pick<ImportOptions, 'resource' | 'mode'> & Partial<ImportOptions>,
  fileName: string,
  mapping?: ImportOptions['mapping'],
): Promise<ImportInfo> {
  const info = await startImport(context, {
    options: {
      batchSize: 100,
      listSeparator: '|',
      emptyAsClear: false,
      allowAdmin: false,
      ...options,
    },
    source: Readable.from([Buffer.from(text)]),
    fileName,
    mapping,
  });
  return waitSettled(context, info.id);
}

/** A bundle of a second sandbox holding a few groups, ACLs and users. */
async function sampleBundle(): Promise<string> {
  const source = await startSandbox({ port: 0 });
  const client = new AdminClient({ baseUrl: source.url, requestTimeoutMs: 10_000 });
  try {
    const groups = await client.postGroups(
      ['Design', 'Legal', 'Support'].map((name) => ({ name, description: `${name} team` })),
    );
    const ids = groups.map((group) => group.id!);
    await client.putAcls(
      ids.map((groupId, g) => ({
        name: `${groups[g]!.name} assets`,
        groupId,
        rootPath: `/Assets/${groups[g]!.name}`,
        forms: ['Basic'],
        uploadForm: 'Basic',
      })),
    );
    await client.postUsers(
      ['mary.shelley', 'ada.byron', 'john.snow', 'rosalind.franklin', 'carl.gauss'].map(
        (username, u) => ({
          username,
          email: `${username}@example.com`,
          groups: [ids[u % ids.length]!],
        }),
      ),
    );
    const read = (resource: ResourceName) => (): RecordBatches =>
      client.streamBatches(resource) as RecordBatches;
    let text = '';
    for await (const part of bundleSource(
      {
        exportedAt: new Date().toISOString(),
        source: 'https://old.example.com',
        porterVersion: '0.1.0',
      },
      [
        ['groups', read('groups')],
        ['users', read('users')],
        ['acls', read('acls')],
      ],
    )) {
      text += part;
    }
    return text;
  } finally {
    await client.close();
    await source.close();
  }
}

async function runMigration(context: PorterContext, bundle: string): Promise<MigrationInfo> {
  const started = await startMigration(context, {
    source: Readable.from([Buffer.from(bundle)]),
    fileName: 'bundle.json',
    options: { mode: 'upsert', dryRun: false, allowAdmin: false, batchSize: 100 },
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const info = await requireMigration(context, started.id);
    if (FINAL_MIGRATION_STATES.has(info.state)) return info;
    if (Date.now() > deadline) throw new Error(`migration ${started.id} did not end`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function shoot(page: Page, name: string, fullPage = false): Promise<void> {
  await page.mouse.move(0, 0);
  await page.screenshot({ path: join(IMAGES, name), fullPage, animations: 'disabled' });
  console.log(`docs/images/${name}`);
}

async function main(): Promise<void> {
  const prefix = `porter-screenshots:${randomUUID().slice(0, 8)}`;
  const outDir = await mkdtemp(join(tmpdir(), 'porter-screenshots-'));
  const sandbox = await startSandbox({ port: 0 });
  const env = loadEnv({
    ...process.env,
    PORTER_PREFIX: prefix,
    ADMIN_BASE_URL: sandbox.url,
    PORTER_EXPORT_DIR: outDir,
  });
  const context = await createPorterContext(env, { logger: silentLogger });
  const workers = startWorkers(context, { concurrency: 2 });
  const app = await buildApiApp({ context, token: TOKEN });
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
  try {
    const groups = await readFile(join(ROOT, 'examples/groups.csv'), 'utf8');
    await runImport(context, groups, { resource: 'groups', mode: 'upsert' }, 'groups.csv');
    const hires = await runImport(
      context,
      NEW_HIRES,
      { resource: 'users', mode: 'upsert' },
      'new-hires.csv',
      { columns: { Login: 'username' }, ignore: ['Notes'], defaults: {} },
    );
    const changes = [
      'username,dept,city',
      'ada.lovelace,Research,London',
      'alan.turing,Engineering,Manchester',
      'new.person,Sales,Paris',
    ].join('\n');
    const dryRun = await runImport(
      context,
      changes,
      { resource: 'users', mode: 'upsert', dryRun: true },
      'moves.csv',
    );

    const browserContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await browserContext.newPage();
    await page.goto(`${baseUrl}/console/`);
    await shoot(page, 'console-sign-in.png');
    await page.getByLabel('API token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('table', { name: 'Imports, newest first' }).waitFor();
    await shoot(page, 'console-imports.png');

    await page.goto(`${baseUrl}/console/#/imports/new`);
    await page.getByLabel('File (CSV, JSON or NDJSON)').setInputFiles({
      name: 'new-hires.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(NEW_HIRES),
    });
    await page.getByLabel('Field for column Login').waitFor();
    await page.getByLabel('Field for column Login').selectOption('username');
    await page
      .getByRole('table', { name: 'First records of the file' })
      .getByText('ada.lovelace')
      .first()
      .waitFor();
    await page
      .getByRole('table', { name: 'First records of the file' })
      .getByText('ok')
      .first()
      .waitFor();
    await shoot(page, 'console-new-import.png', true);

    await page.goto(`${baseUrl}/console/#/imports/${encodeURIComponent(hires.id)}`);
    await page.getByRole('table', { name: 'Failed records' }).waitFor();
    await shoot(page, 'console-import.png', true);

    await page.goto(`${baseUrl}/console/#/imports/${encodeURIComponent(dryRun.id)}`);
    await page.getByRole('table', { name: 'Planned records and their changes' }).waitFor();
    await shoot(page, 'console-plan.png', true);

    await page.goto(`${baseUrl}/console/#/exports`);
    await page.getByRole('button', { name: 'Run export' }).click();
    await page.getByRole('button', { name: 'users.csv' }).waitFor({ timeout: 60_000 });
    await page.getByLabel('Name').fill('nightly-users');
    await page.getByLabel('Cron').fill('0 2 * * *');
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Add schedule' }).click();
    await page.getByRole('table', { name: 'Schedules' }).waitFor();
    await shoot(page, 'console-exports.png', true);

    const migration = await runMigration(context, await sampleBundle());
    await page.goto(`${baseUrl}/console/#/migrations/${encodeURIComponent(migration.id)}`);
    await page.getByRole('link', { name: /^Memberships import/ }).waitFor();
    await shoot(page, 'console-migration.png', true);

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const small = await phone.newPage();
    await small.goto(`${baseUrl}/console/`);
    await small.getByLabel('API token').fill(TOKEN);
    await small.getByRole('button', { name: 'Sign in' }).click();
    await small.goto(`${baseUrl}/console/#/imports/${encodeURIComponent(hires.id)}`);
    await small.getByRole('table', { name: 'Failed records' }).waitFor();
    await shoot(small, 'console-phone.png');
  } finally {
    await browser.close();
    await app.close();
    await workers.close();
    await context.importQueue.obliterate({ force: true }).catch(() => {});
    await context.close();
    await sandbox.close();
    await deleteKeysWithPrefix(env.REDIS_URL, prefix);
    await rm(outDir, { recursive: true, force: true });
  }
}

await main();
