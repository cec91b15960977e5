/**
 * Anchors travel with the DAM records: an export (bundle) of a directory porter filled by anchor,
 * migrated into another, is matched there by the same anchors (a rename stays a rename).
 */
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { requireMigration, startMigration } from '../../src/app/migrations.js';
import { readMappingFile } from '../../src/mapping/read-mapping-file.js';
import { FINAL_MIGRATION_STATES } from '../../src/migrate/migration-model.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { bundleText } from '../migrate/migrate-fixture.js';

const pipelines: Pipeline[] = [];
afterAll(async () => {
  await Promise.all(pipelines.map((one) => one.close()));
});

const mapping = await readMappingFile(
  'examples/hr/mapping.json',
  { anchor: '`Employee ID`', columns: { Login: 'username', Mail: 'email' } },
  'users',
);
const HEADER = ['Employee ID', 'Login', 'Mail'];

describe('export → migrate keeps anchors', () => {
  it('a migrated directory matches by the anchors of the source', async () => {
    const source = await startPipeline();
    pipelines.push(source);
    await source.run(
      csv(HEADER, [
        ['E1', 'ann', 'ann@x.example'],
        ['E2', 'bob', 'bob@x.example'],
      ]),
      { resource: 'users', mode: 'upsert' },
      { mapping },
    );
    const bundle = await bundleText(source.sandbox.url);

    const target = await startPipeline();
    pipelines.push(target);
    const started = await startMigration(target.context, {
      source: Readable.from([Buffer.from(bundle)]),
      fileName: 'bundle.json',
      options: { mode: 'upsert', dryRun: false, allowAdmin: false, batchSize: 50 },
    });
    const migrated = await waitFor(
      async () => {
        const info = await requireMigration(target.context, started.id);
        return FINAL_MIGRATION_STATES.has(info.state) ? info : undefined;
      },
      { timeoutMs: 120_000, what: `migration ${started.id}` },
    );
    expect(migrated.state).toBe('completed');
    const ann = target.sandbox.store.userByName('ann')!;
    expect(ann.substitutionMap).toEqual({ porterAnchor: 'E1' });

    const { results } = await target.run(
      csv(HEADER, [
        ['E1', 'ann.smith', 'ann.smith@x.example'],
        ['E2', 'bob', 'bob@x.example'],
      ]),
      { resource: 'users', mode: 'upsert' },
      { mapping },
    );
    expect(results.map((one) => [one.key, one.action, one.status])).toEqual([
      ['ann.smith', 'rename', 'succeeded'],
      ['bob', 'unchanged', 'succeeded'],
    ]);
    expect(target.sandbox.store.userByName('ann.smith')?.userId).toBe(ann.userId);
    expect(target.sandbox.store.userByName('ann')).toBeUndefined();
  }, 180_000);
});
