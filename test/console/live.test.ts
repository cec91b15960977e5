import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv } from '../helpers/pipeline.js';
import { eventually, signIn, startConsoleHarness, type ConsoleHarness } from './harness.js';

let harness: ConsoleHarness;

beforeAll(async () => {
  // no workers at first: imports stay queued until a test starts them
  harness = await startConsoleHarness({ workers: false });
});
afterAll(async () => {
  await harness?.close();
});

const rows = (prefix: string, count: number): string[][] =>
  Array.from({ length: count }, (_, index) => [`${prefix}.${index}`, `${index}@example.com`]);

describe('console: live pages', () => {
  it('cancels a queued import from its page', async () => {
    const queued = await harness.pipeline.submit(csv(['username', 'email'], rows('cancel', 3)), {
      resource: 'users',
      mode: 'create',
    });
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/${encodeURIComponent(queued.id)}`);
    await page.locator('.summary').getByText('queued', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Cancel import' }).click();
    await page.locator('.summary').getByText('cancelled', { exact: true }).waitFor();
    expect((await harness.pipeline.context.store.get(queued.id))?.state).toBe('cancelled');
    await eventually(() => page.getByRole('button', { name: 'Cancel import' }).count()).toBe(0);
  });

  it('the list follows an import from queued to its end without a reload', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    const queued = await harness.pipeline.submit(csv(['username', 'email'], rows('live', 250)), {
      resource: 'users',
      mode: 'create',
      batchSize: 25,
    });
    const row = page.getByRole('row', { name: new RegExp(queued.id) });
    await eventually(() => row.textContent()).toContain('queued');
    await eventually(() => row.textContent()).toContain('0 of 250 records');

    harness.pipeline.startWorkers({ concurrency: 1 });
    await eventually(() => row.textContent(), 60_000).toContain('250 succeeded');
    await eventually(() => row.textContent()).toContain('250 of 250 records (100%)');
    const bar = row.locator('progress');
    expect(await bar.evaluate((element) => (element as unknown as { value: number }).value)).toBe(
      250,
    );
    expect(harness.problems).toEqual([]);
  });
});
