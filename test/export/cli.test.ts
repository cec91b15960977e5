/** `porter export` and `porter schedule` as a user runs them, against the in-process workers. */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExportHarness, type ExportHarness } from './export-fixture.js';
import { runPorter, type CliResult } from '../helpers/porter-cli.js';

let harness: ExportHarness;

beforeAll(async () => {
  harness = await startExportHarness({ sandbox: { seed: { users: 250, groups: 3, acls: 3 } } });
});
afterAll(async () => harness?.close());

function porter(args: string[]): Promise<CliResult> {
  const { context, sandbox } = harness.pipeline;
  return runPorter(args, {
    REDIS_URL: context.env.REDIS_URL,
    PORTER_PREFIX: context.env.PORTER_PREFIX,
    PORTER_EXPORT_DIR: harness.outDir,
    ADMIN_BASE_URL: sandbox.url,
  });
}

describe('porter export', () => {
  it('prints the id, follows with --wait and says where the files are', async () => {
    const out = join(harness.outDir, 'cli');
    const result = await porter([
      'export',
      '--resource',
      'all',
      '--format',
      'ndjson',
      '--out',
      out,
      '--wait',
    ]);
    expect(result.code).toBe(0);
    const exportId = result.stdout.trim();
    expect(exportId).toMatch(/^exp_/);
    expect(result.stderr).toMatch(/records written/);
    expect(result.stderr).toContain(
      `export ${exportId} completed: 256 records in ${join(out, exportId)}`,
    );
    expect(result.stderr).toMatch(/users\.ndjson {2}250 records/);
    expect((await readdir(join(out, exportId))).sort()).toEqual([
      'acls.ndjson',
      'groups.ndjson',
      'manifest.json',
      'users.ndjson',
    ]);
  });

  it('exits 64 on a bad option', async () => {
    const result = await porter(['export', '--resource', 'users', '--format', 'bundle']);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/use --resource all/);
  });

  it('exits 1 and says why when the export fails', async () => {
    harness.pipeline.sandbox.setFaults({ failRate: 1 });
    try {
      const result = await porter(['export', '--resource', 'groups', '--wait']);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/export exp_\w+ failed: .*injected failure/);
    } finally {
      harness.pipeline.sandbox.setFaults({ failRate: 0 });
    }
  });
});

describe('porter schedule', () => {
  it('adds, lists and removes a schedule', async () => {
    const added = await porter([
      'schedule',
      'add',
      'nightly',
      '--cron',
      '0 2 * * *',
      '--tz',
      'Europe/Berlin',
      '--resource',
      'all',
      '--format',
      'csv',
      '--keep',
      '14',
    ]);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(
      /^nightly {2}"0 2 \* \* \*" \(Europe\/Berlin\) {2}default: all as csv/,
    );
    const listed = await porter(['schedule', 'list', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        name: 'nightly',
        keep: 14,
        request: expect.objectContaining({ outDir: harness.outDir }),
      }),
    ]);
    expect((await porter(['schedule', 'remove', 'nightly'])).code).toBe(0);
    const again = await porter(['schedule', 'remove', 'nightly']);
    expect(again.code).toBe(66);
    expect(again.stderr).toMatch(/no schedule named "nightly" \[PORTER_NOT_FOUND\]/);
  });

  it('refuses a bad cron pattern or time zone with exit 64 before storing anything', async () => {
    const badCron = await porter([
      'schedule',
      'add',
      'x',
      '--cron',
      '0 25 * * *',
      '--resource',
      'users',
    ]);
    expect(badCron.code).toBe(64);
    expect(badCron.stderr).toMatch(/Cron pattern "0 25 \* \* \*" is not valid.*\[PORTER_USAGE\]/);
    const badZone = await porter([
      'schedule',
      'add',
      'x',
      '--cron',
      '0 2 * * *',
      '--tz',
      'Europe/Atlantis',
      '--resource',
      'users',
    ]);
    expect(badZone.code).toBe(64);
    expect(badZone.stderr).toMatch(/Unknown time zone "Europe\/Atlantis"/);
    expect((await porter(['schedule', 'list'])).stderr).toMatch(/no schedules/);
  });
});
