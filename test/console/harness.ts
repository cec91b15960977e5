/**
 * A porter API with workers (real Redis, real sandbox) and a headless Debian chromium driven
 * through playwright-core, for the console's browser tests. Never downloads a browser.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const TOKEN = 'console-browser-token-0123456789';

export interface ConsoleHarness {
  pipeline: Pipeline;
  baseUrl: string;
  browser: Browser;
  /** A fresh browser context (its own sessionStorage) with a page on it. */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** Page errors and CSP violations seen on any page so far. */
  problems: string[];
  close(): Promise<void>;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

export async function startConsoleHarness(
  options: { workers?: boolean; env?: Record<string, string> } = {},
): Promise<ConsoleHarness> {
  const outDir = await mkdtemp(join(tmpdir(), 'porter-console-'));
  const pipeline = await startPipeline({
    env: { PORTER_EXPORT_DIR: outDir, ...options.env },
    workers: options.workers ?? true,
  });
  let app: FastifyInstance | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  try {
    app = await buildApiApp({ context: pipeline.context, token: TOKEN });
    const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    const opened = browser;
    return {
      pipeline,
      baseUrl,
      browser: opened,
      problems,
      async newPage(viewport = { width: 1280, height: 800 }) {
        const context = await opened.newContext({ viewport, acceptDownloads: true });
        contexts.push(context);
        const page = await context.newPage();
        page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        page.on('console', (message) => {
          if (/content security policy/i.test(message.text())) problems.push(message.text());
        });
        return page;
      },
      async close() {
        for (const context of contexts) await context.close().catch(() => {});
        await opened.close();
        await app?.close();
        await pipeline.close();
        await rm(outDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await browser?.close();
    await app?.close();
    await pipeline.close();
    await rm(outDir, { recursive: true, force: true });
    throw error;
  }
}

/** Opens the console and signs in with the token. */
export async function signIn(page: Page, baseUrl: string, token = TOKEN): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Imports', level: 1 }).waitFor();
}

/** Polls `read` until the matcher that follows holds (30 s by default): no sleeps. */
export function eventually<T>(read: () => Promise<T> | T, timeout = 30_000) {
  return expect.poll(read, { timeout, interval: 100 });
}

/** Approve… opens a dialog naming the counts; its button works once they are typed. */
export async function approveThroughDialog(page: Page, counts: string): Promise<void> {
  await page.getByRole('button', { name: 'Approve…' }).click();
  const dialog = page.getByRole('dialog', { name: /Approve the plan of/ });
  await dialog.waitFor();
  expect(await dialog.textContent()).toContain(`It writes ${counts}.`);
  const go = dialog.getByRole('button', { name: `Approve: ${counts}` });
  expect(await go.isDisabled()).toBe(true);
  await dialog.getByLabel(`Type “${counts}” to confirm`).fill(counts);
  await eventually(() => go.isDisabled()).toBe(false);
  await go.click();
}
