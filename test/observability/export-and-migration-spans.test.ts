/**
 * An export's and a migration's spans carry their id: a porter that traces (in this process),
 * its real queues and workers, a real sandbox and a real OTLP receiver.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExport } from '../../src/app/exports.js';
import { requireMigration, startMigration } from '../../src/app/migrations.js';
import { FINAL_MIGRATION_STATES } from '../../src/migrate/migration-model.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { bundleText, seedSource } from '../migrate/migrate-fixture.js';
import { startExportHarness, type ExportHarness } from '../export/export-fixture.js';
import {
  startTracingToReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../helpers/otlp-receiver.js';
import { waitFor } from '../helpers/redis.js';

let otlp: OtlpReceiver;
let harness: ExportHarness;
let source: RunningSandbox;
let warnings: string[];

beforeAll(async () => {
  // the first start wins in a process: the pipeline's context finds tracing on
  ({ otlp, warnings } = await startTracingToReceiver({ OTEL_BSP_SCHEDULE_DELAY: '50' }));
  harness = await startExportHarness({ sandbox: { seed: { users: 30, groups: 3 } } });
  source = await startSandbox({ port: 0 });
});

afterAll(async () => {
  await harness?.close();
  await source?.close();
  await otlp?.close();
});

function spansWith(name: string, value: string): ReceivedSpan[] {
  return otlp.spans.filter((span) => span.attributes[name] === value);
}

describe('the spans of other work', () => {
  it('an export: its job, its run and its reads carry the export id', async () => {
    const { context } = harness.pipeline;
    const queued = await startExport(context, {
      resource: 'users',
      format: 'ndjson',
      outDir: harness.outDir,
    });
    // the job's run ends last: once it is in, the export's spans are
    const spans = await waitFor(
      () => {
        const found = spansWith('porter.export.id', queued.id);
        return found.some((span) => span.name === 'process exports') ? found : undefined;
      },
      { timeoutMs: 30_000, what: `the spans of export ${queued.id}` },
    );
    const names = spans.map((span) => span.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'add exports.export',
        'process exports',
        'porter.export.run',
        'GET users',
      ]),
    );
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    const run = spans.find((span) => span.name === 'porter.export.run')!;
    expect(run.attributes).toMatchObject({
      'porter.target': 'default',
      'porter.export.state': 'completed',
      'porter.records': 30,
    });
    const read = spans.find((span) => span.name === 'GET users')!;
    expect(read.attributes).toMatchObject({ 'porter.records': 30, 'porter.target': 'default' });
  });

  it("a migration: its stages' imports carry the migration id, each import its own id", async () => {
    await seedSource(source.url, { groups: 2, usersPerGroup: 2, aclsPerGroup: 1 });
    const { context } = harness.pipeline;
    const started = await startMigration(context, {
      source: Readable.from([Buffer.from(await bundleText(source.url))]),
      fileName: 'bundle.json',
      options: { mode: 'upsert', dryRun: false, allowAdmin: false, batchSize: 50 },
    });
    const info = await waitFor(
      async () => {
        const current = await requireMigration(context, started.id);
        return FINAL_MIGRATION_STATES.has(current.state) ? current : undefined;
      },
      { timeoutMs: 60_000, what: `migration ${started.id}` },
    );
    expect(info.state).toBe('completed');
    const uploads = await waitFor(
      () => {
        const found = spansWith('porter.migration.id', started.id).filter(
          (span) => span.name === 'porter.import.upload',
        );
        return found.length >= 3 ? found : undefined;
      },
      { timeoutMs: 30_000, what: 'the uploads of the groups, ACLs and users stages' },
    );
    expect(uploads.map((span) => span.attributes['porter.resource'])).toEqual(
      expect.arrayContaining(['groups', 'acls', 'users']),
    );
    // the stage's writes, in the workers, carry both ids
    const writes = await waitFor(
      () => {
        const found = spansWith('porter.migration.id', started.id).filter((span) =>
          /^(PUT|POST) /.test(span.name),
        );
        return found.length >= 3 ? found : undefined;
      },
      { timeoutMs: 30_000, what: "the stages' writes" },
    );
    const importIds = new Set(uploads.map((span) => span.attributes['porter.import.id']));
    for (const write of writes) {
      expect(importIds).toContain(write.attributes['porter.import.id']);
    }
    expect(warnings).toEqual([]);
  });
});
