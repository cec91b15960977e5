/**
 * The queue dashboard in a real browser: the sign-in form takes the API token, and the dashboard
 * then loads and lists both queues (its scripts call /queues/api with the session cookie).
 */
import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const TOKEN = 'browser-token-0123456789';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM))('/queues in a browser', () => {
  let pipeline: Pipeline;
  let app: FastifyInstance;
  let baseUrl: string;
  let browser: Browser;
  beforeAll(async () => {
    pipeline = await startPipeline({ workers: false });
    app = await buildApiApp({ context: pipeline.context, token: TOKEN });
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await pipeline?.close();
  });

  it('signs in with the token and shows the import and export queues', async () => {
    const page = await browser.newPage();
    // the dashboard's own requests name only the fields its routes take
    const refused: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 400) refused.push(response.url());
    });
    const first = await page.goto(`${baseUrl}/queues`);
    expect(first?.status()).toBe(401);
    await page.fill('input[name=token]', 'not-the-token');
    await page.click('button[type=submit]');
    await expect.poll(() => page.textContent('body')).toContain('That is not a porter token.');
    await page.fill('input[name=token]', TOKEN);
    await page.click('button[type=submit]');
    await page.waitForURL(`${baseUrl}/queues/`);
    await page.getByText('import-batches').first().waitFor({ timeout: 30_000 });
    await page.getByText('exports').first().waitFor({ timeout: 30_000 });
    // a queue's page with a status filter, loaded afresh (its address carries status and page)
    await page.goto(`${baseUrl}/queues/queue/import-batches?status=failed&page=1`);
    await page.getByText('import-batches').first().waitFor({ timeout: 30_000 });
    expect(refused).toEqual([]);
    const cookies = await page.context().cookies();
    expect(cookies.find((cookie) => cookie.name === 'porter_board')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
      path: '/queues',
    });
    await page.close();
  });
});
