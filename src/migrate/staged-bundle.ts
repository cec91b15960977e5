/**
 * A bundle (src/export/bundle.ts) made from a migration's source sections in Redis: what a
 * migration from a live target read, kept as a file that `porter migrate BUNDLE` and
 * `porter diff` take. Records are as the source answered them, ids included, 1000 per read.
 */
import type { ResourceName } from '../admin/resources.js';
import { bundleSource, type BundleHead } from '../export/bundle.js';
import type { RecordBatches } from '../export/export-types.js';
import type { MigrationStore } from './migration-store.js';
import { SOURCE_ORDER } from './read-source.js';

const CHUNK = 1000;

async function* sectionRecords(
  store: MigrationStore,
  migrationId: string,
  resource: ResourceName,
): RecordBatches {
  const total = await store.sourceCount(migrationId, resource);
  for (let start = 0; start < total; start += CHUNK) {
    yield await store.readSource(migrationId, resource, start, CHUNK);
  }
}

/** The bundle document of the migration's sources, in parts of about 64 KiB. */
export function stagedBundle(
  store: MigrationStore,
  migrationId: string,
  head: BundleHead,
): AsyncGenerator<string> {
  return bundleSource(
    head,
    SOURCE_ORDER.map(
      (resource) => [resource, () => sectionRecords(store, migrationId, resource)] as const,
    ),
  );
}
