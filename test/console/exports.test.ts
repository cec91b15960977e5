import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, signIn, startConsoleHarness, type ConsoleHarness } from './harness.js';
import { listSchedules } from '../../src/queue/schedules.js';
import { csv } from '../helpers/pipeline.js';

let harness: ConsoleHarness;

beforeAll(async () => {
  harness = await startConsoleHarness();
  await harness.pipeline.run(
    csv(
      ['username', 'email'],
      [
        ['export.one', 'one@example.com'],
        ['export.two', 'two@example.com'],
      ],
    ),
    { resource: 'users', mode: 'create' },
  );
});
afterAll(async () => {
  await harness?.close();
});

describe('console: exports and schedules', () => {
  it('runs an export and downloads its file', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.getByRole('link', { name: 'Exports' }).click();
    await page.getByRole('heading', { name: 'Exports', level: 1 }).waitFor();
    await page.getByLabel('Resource').first().selectOption('users');
    await page.getByLabel('Format').first().selectOption('csv');
    await page.getByRole('button', { name: 'Run export' }).click();

    const file = page.getByRole('button', { name: 'users.csv' });
    await file.waitFor({ timeout: 60_000 });
    const [download] = await Promise.all([page.waitForEvent('download'), file.click()]);
    expect(download.suggestedFilename()).toMatch(/-users\.csv$/);
    const text = await readFile((await download.path())!, 'utf8');
    expect(text).toContain('export.one');
    expect(text).toContain('export.two');
    expect(harness.problems).toEqual([]);
  });

  it('adds a schedule and removes it', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/exports`);
    await page.getByLabel('Name').fill('nightly-users');
    await page.getByLabel('Cron').fill('0 2 * * *');
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Add schedule' }).click();

    const schedules = page.getByRole('table', { name: 'Schedules' });
    const row = schedules.getByRole('row', { name: /nightly-users/ });
    await row.waitFor();
    await eventually(() => row.textContent()).toContain('Europe/Berlin');
    const stored = await listSchedules(harness.pipeline.context.exportQueue);
    expect(stored.map((schedule) => schedule.name)).toEqual(['nightly-users']);

    // a bad cron pattern is refused with porter's message, shown as text
    await page.getByLabel('Name').fill('broken');
    await page.getByLabel('Cron').fill('not a cron');
    await page.getByRole('button', { name: 'Add schedule' }).click();
    await eventually(() => page.getByRole('alert').count()).toBe(1);

    await page.getByRole('button', { name: 'Remove schedule nightly-users' }).click();
    await page.getByText('No schedules.').waitFor();
    expect(await listSchedules(harness.pipeline.context.exportQueue)).toEqual([]);
    expect(harness.problems).toEqual([]);
  });
});
