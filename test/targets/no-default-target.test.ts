/**
 * A targets file naming only `prod` and `staging`, and no ADMIN_BASE_URL: there is no target
 * `default` (no sandbox that nobody configured). The targets are listed and checked as they
 * are, /readyz is ready, the console chooses none for the operator, and work that names no
 * target is refused (exit 64 / 400 PORTER_USAGE, naming the targets) on the command line,
 * over HTTP and in schedules. With no targets file, the sandbox stays the default.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { loadTargets } from '../../src/targets/targets.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { signIn, startConsoleHarness, TOKEN, type ConsoleHarness } from '../console/harness.js';
import { csv } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';

let prod: RunningSandbox;
let staging: RunningSandbox;
let harness: ConsoleHarness;
let dir: string;
let targetsFile: string;
let input: string;

beforeAll(async () => {
  prod = await startSandbox({ port: 0 });
  staging = await startSandbox({ port: 0 });
  dir = await mkdtemp(join(tmpdir(), 'porter-no-default-'));
  targetsFile = join(dir, 'targets.json');
  await writeFile(
    targetsFile,
    JSON.stringify({ prod: { url: prod.url }, staging: { url: staging.url } }),
  );
  input = join(dir, 'users.csv');
  await writeFile(input, csv(['username', 'email'], [['ada', 'ada@example.com']]));
  harness = await startConsoleHarness({
    env: { PORTER_TARGETS_FILE: targetsFile, ADMIN_BASE_URL: '' },
  });
}, 120_000);

afterAll(async () => {
  await harness?.close();
  await prod?.close();
  await staging?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** What a `porter` child process of this configuration needs: no ADMIN_BASE_URL. */
function cliEnv(): Record<string, string> {
  return { ...harness.pipeline.childEnv(), ADMIN_BASE_URL: '', PORTER_TARGETS_FILE: targetsFile };
}

const auth = { authorization: `Bearer ${TOKEN}` };

describe('where `default` comes from', () => {
  const load = (vars: Record<string, string>) => loadTargets(loadEnv(vars), vars);

  it('a targets file without one, and no ADMIN_BASE_URL: none', () => {
    expect(load({ PORTER_TARGETS_FILE: targetsFile }).names()).toEqual(['prod', 'staging']);
  });

  it('ADMIN_BASE_URL beside the file, or no targets file at all: there is one', () => {
    const withUrl = load({ PORTER_TARGETS_FILE: targetsFile, ADMIN_BASE_URL: prod.url });
    expect(withUrl.names().sort()).toEqual(['default', 'prod', 'staging']);
    // a fresh checkout: the sandbox
    expect(load({}).require('default').summary.url).toBe('http://127.0.0.1:8080');
  });
});

describe('on the command line', () => {
  it('porter targets lists prod and staging only, and check exits 0 when they answer', async () => {
    const list = await runPorter(['targets', '--json'], cliEnv());
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { name: string }[]).map((one) => one.name)).toEqual([
      'prod',
      'staging',
    ]);
    const check = await runPorter(['targets', 'check', '--no-counts'], cliEnv());
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).not.toMatch(/default/);
  });

  it('an import without --target is refused with exit 64, naming the targets; nothing is stored', async () => {
    const refused = await runPorter(
      ['import', input, '--resource', 'users', '--mode', 'create', '--wait'],
      cliEnv(),
    );
    expect(refused.code).toBe(64);
    expect(refused.stderr).toMatch(/name a target .*configured: prod, staging.*\[PORTER_USAGE\]/);
    expect(await harness.pipeline.context.store.list({ limit: 5 })).toEqual([]);
    for (const sandbox of [prod, staging]) expect(sandbox.store.stats.requests.POST).toBe(0);
    // named, it goes where it is told
    const named = await runPorter(
      ['import', input, '--resource', 'users', '--mode', 'create', '--target', 'staging', '--wait'],
      cliEnv(),
    );
    expect(named.code, named.stderr).toBe(0);
    expect(staging.store.stats.requests.POST).toBe(1);
    expect(prod.store.stats.requests.POST).toBe(0);
  });

  it('a schedule without --target is refused the same way', async () => {
    const withOptions = await runPorter(
      [
        ...['schedule', 'add', 'daily-hires', '--cron', '0 6 * * *', '--import', input],
        ...['--resource', 'users', '--mode', 'create'],
      ],
      cliEnv(),
    );
    expect(withOptions.code).toBe(64);
    expect(withOptions.stderr).toMatch(/configured: prod, staging.*\[PORTER_USAGE\]/);
    const exports = await runPorter(
      ['schedule', 'add', 'nightly', '--cron', '0 2 * * *', '--resource', 'all'],
      cliEnv(),
    );
    expect(exports.code).toBe(64);
    expect(exports.stderr).toMatch(/configured: prod, staging/);
  });
});

describe('over HTTP and in the console', () => {
  it('an import naming no target is 400 PORTER_USAGE naming the targets; /readyz is ready', async () => {
    const response = await fetch(`${harness.baseUrl}/v1/imports?resource=users&mode=create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body: csv(['username', 'email'], [['bob', 'bob@example.com']]),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('PORTER_USAGE');
    expect(body.error.message).toContain('configured: prod, staging');
    const exported = await fetch(`${harness.baseUrl}/v1/exports`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ resource: 'users', format: 'csv' }),
    });
    expect(exported.status).toBe(400);
    const ready = await fetch(`${harness.baseUrl}/readyz`);
    const readiness = (await ready.json()) as { checks: { targets: Record<string, unknown> } };
    expect(ready.status).toBe(200);
    expect(Object.keys(readiness.checks.targets)).toEqual(['prod', 'staging']);
  });

  it('the console chooses no target for the operator', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.goto(`${harness.baseUrl}/console/#/imports/new`);
    await page.getByRole('heading', { name: 'New import' }).waitFor();
    const picker = page.locator('#target');
    expect(await picker.inputValue()).toBe('');
    expect(await picker.locator('option').allTextContents()).toEqual([
      'Choose a target…',
      `prod — ${prod.url}`,
      `staging — ${staging.url}`,
    ]);
    await page.goto(`${harness.baseUrl}/console/#/exports`);
    expect(await page.locator('#export-target').inputValue()).toBe('');
  });
});
