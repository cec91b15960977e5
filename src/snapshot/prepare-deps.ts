/** What preparing an import needs: Redis, the store, and the admin server it is bound to. */
import type { Redis } from 'ioredis';
import type { AdminClient } from '../admin/client.js';
import type { BindTarget } from '../execute/run-batch.js';
import type { RetryPolicy } from '../execute/retry-policy.js';
import type { ImportStore } from '../results/import-store.js';
import type { SharedSnapshotReads } from './shared-reads.js';

export interface PrepareDeps {
  redis: Redis;
  store: ImportStore;
  client: AdminClient;
  retry: RetryPolicy;
  /** Names the admin server in Redis keys, so directory sizes of two targets never mix. */
  target: string;
  /** The username porter signs in as (ADMIN_USER): a sync never touches it. */
  selfUser?: string;
  signal?: AbortSignal;
  /** A worker's reads of the directory, which imports of one target prepared together share. */
  snapshotReads?: SharedSnapshotReads;
  /** Told when an import paused while its server could not be read runs again. */
  onResumed?(importId: string): void;
}

/** A worker's deps: the import is bound to its own target before anything is read. */
export type UnboundPrepareDeps = Omit<PrepareDeps, 'client' | 'selfUser' | 'target'> & {
  bindTarget: BindTarget;
};
