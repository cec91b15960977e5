/**
 * Console: an import whose admin server could not be reached says why on its page, and lists
 * its unprocessed records (before, it offered "Retry 12 failed" and showed no table).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv } from '../helpers/pipeline.js';
import { eventually, signIn, startConsoleHarness, type ConsoleHarness } from './harness.js';

let harness: ConsoleHarness;

beforeAll(async () => {
  harness = await startConsoleHarness();
});
afterAll(async () => {
  await harness?.close().catch(() => {});
});

describe('console: why records were not processed', () => {
  it('the admin server cannot be reached: the page says so and lists the records', async () => {
    const url = harness.pipeline.sandbox.url;
    // the admin server goes away: nothing answers at its address any more
    await harness.pipeline.sandbox.close();
    const { info } = await harness.pipeline.run(
      csv(
        ['username'],
        Array.from({ length: 12 }, (_, i) => [`down.${i}`]),
      ),
      { resource: 'users', mode: 'upsert', lookup: 'each' },
    );
    expect(info.counts.unprocessed).toBe(12);

    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/${encodeURIComponent(info.id)}`);
    await eventually(() => page.locator('.summary .why-list').textContent()).toBe(
      `12 unprocessed: PORTER_TARGET_UNREACHABLE not sent: cannot reach the admin server at ${url} (ECONNREFUSED)`,
    );
    const table = page.getByRole('table', { name: 'Failed and unprocessed records' });
    await eventually(() => table.getByRole('row').count()).toBe(13);
    expect(await table.getByRole('row').nth(1).getByRole('cell').nth(2).textContent()).toBe(
      'unprocessed',
    );
    expect(harness.problems).toEqual([]);
  });
});
