/**
 * The `read` step of a migration from a live target: every group, user and ACL of the source
 * target, read with one streamed GET per resource (as an export reads them), kept in the
 * migration's Redis sections exactly as a bundle's records are. Groups come first (an ACL's
 * key names its group). A read that fails is retried with the import's policy, its section
 * started over; a read that runs again (a crashed worker) starts from the beginning.
 */
import type { AdminClient } from '../admin/client.js';
import type { ResourceName } from '../admin/resources.js';
import { withReadRetry, type RetryPolicy } from '../execute/retry-policy.js';
import type { MigrationStore } from './migration-store.js';
import { SourceStager } from './stage-source.js';

/** The order the sections are read in, and a saved bundle's order. */
export const SOURCE_ORDER: readonly ResourceName[] = ['groups', 'users', 'acls'];

export interface LiveSource {
  client: Pick<AdminClient, 'streamBatches'>;
  /** The source's URL as it may be shown (no credentials). */
  url: string;
}

export interface ReadSourceOptions {
  retry: RetryPolicy;
  signal?: AbortSignal;
  onRetry?: (error: unknown, delayMs: number, resource: ResourceName) => Promise<void> | void;
  now?: () => Date;
}

/** Reads the source into the migration and marks it received (`running`); returns the totals. */
export async function readLiveSource(
  store: MigrationStore,
  migrationId: string,
  source: LiveSource,
  options: ReadSourceOptions,
): Promise<Record<ResourceName, number>> {
  const readAt = (options.now ?? (() => new Date()))().toISOString();
  await store.clearSources(migrationId, SOURCE_ORDER);
  const stager = new SourceStager(store, migrationId);
  for (const resource of SOURCE_ORDER) {
    await withReadRetry(
      async () => {
        await stager.restart(resource);
        for await (const batch of source.client.streamBatches(resource, {}, options.signal)) {
          await stager.add(resource, batch as Record<string, unknown>[]);
        }
        await stager.done();
      },
      options.retry,
      {
        signal: options.signal,
        onRetry: (error, delayMs) => options.onRetry?.(error, delayMs, resource),
      },
    );
  }
  await stager.done();
  await store.markReceived(migrationId, { source: source.url, exportedAt: readAt }, stager.totals);
  return stager.totals;
}
