/**
 * Reads current records from the admin server by natural key, with retries,
 * caching what one batch asks for more than once.
 */
import type { AdminClient } from '../admin/client.js';
import { AdminError } from '../admin/errors.js';
import type { ResourceName, ResourceRecordMap } from '../admin/resources.js';
import type { AclRecord, GroupRecord, UserRecord } from '../admin/schemas.js';
import { breakerOutcome } from '../execute/circuit-breaker.js';
import { withReadRetry, type RetryPolicy } from '../execute/retry-policy.js';
import type { DirectoryView } from './directory-view.js';

export interface LookupOptions {
  client: AdminClient;
  retry: RetryPolicy;
  signal?: AbortSignal;
  /** Called on 429 before waiting, so every worker can back off together. */
  onRateLimited?: (retryAfterMs: number) => Promise<void> | void;
  /**
   * Told every read's outcome (answered, or failed as transient or ambiguous), for the circuit
   * breaker; it may throw to stop the reads (the import was paused).
   */
  onOutcome?: (failed: boolean, startedAt: number, error?: unknown) => Promise<void> | void;
  /**
   * The server key that looks like this one, from the scan of every server key made when the
   * import was prepared (the interface reads one exact key at a time).
   */
  lookalikeOf?: (key: string) => Promise<string | undefined>;
}

/** Looks records up one key at a time (the interface has no multi-key read). */
export class RecordLookup implements DirectoryView {
  private readonly groupsByName = new Map<string, Promise<GroupRecord | undefined>>();
  private readonly usersByName = new Map<string, Promise<UserRecord | undefined>>();
  private readonly aclsByGroup = new Map<number, Promise<AclRecord[]>>();

  constructor(private readonly options: LookupOptions) {}

  /** Reads calls made, for the batch's statistics. */
  reads = 0;

  lookalikeOf(key: string): Promise<string | undefined> {
    return this.options.lookalikeOf?.(key) ?? Promise.resolve(undefined);
  }

  /** The user with this username; `fresh` skips what this batch read before. */
  user(username: string, fresh = false): Promise<UserRecord | undefined> {
    if (fresh) this.usersByName.delete(username);
    return cached(this.usersByName, username, async () => {
      const found = await this.read(() =>
        this.options.client.listUsers({ username }, this.options.signal),
      );
      return found.find((user) => user.username === username);
    });
  }

  async userById(userId: number): Promise<UserRecord | undefined> {
    const found = await this.read(() =>
      this.options.client.listUsers({ userId }, this.options.signal),
    );
    return found.find((user) => user.userId === userId);
  }

  /** The group with this name; `fresh` skips what this batch read before. */
  group(name: string, fresh = false): Promise<GroupRecord | undefined> {
    if (fresh) this.groupsByName.delete(name);
    return cached(this.groupsByName, name, async () => {
      const found = await this.read(() =>
        this.options.client.listGroups({ name }, this.options.signal),
      );
      return found.find((group) => group.name === name);
    });
  }

  async groupById(id: number): Promise<GroupRecord | undefined> {
    const found = await this.read(() =>
      this.options.client.listGroups({ id }, this.options.signal),
    );
    return found.find((group) => group.id === id);
  }

  async aclById(id: string): Promise<AclRecord | undefined> {
    const found = await this.read(() => this.options.client.listAcls({ id }, this.options.signal));
    return found.find((acl) => acl.id === id);
  }

  /** The ACL with this name in the group; `fresh` skips what this batch read before. */
  async aclByName(groupId: number, name: string, fresh = false): Promise<AclRecord | undefined> {
    if (fresh) this.aclsByGroup.delete(groupId);
    const acls = await cached(this.aclsByGroup, groupId, () =>
      this.read(() => this.options.client.listAcls({ groupId }, this.options.signal)),
    );
    return acls.find((acl) => acl.name === name);
  }

  /**
   * The records of a resource that `keep` accepts, read with one unfiltered GET whose answer is
   * streamed and filtered as it arrives (the interface has no multi-key filter): what settling
   * many records at once costs in one call instead of one per record. Counts as one read.
   */
  readAll<R extends ResourceName>(
    resource: R,
    keep: (record: ResourceRecordMap[R]) => boolean,
  ): Promise<ResourceRecordMap[R][]> {
    this.bulkReads++;
    return this.read(async () => {
      const kept: ResourceRecordMap[R][] = [];
      const { client, signal } = this.options;
      for await (const records of client.streamBatches(resource, {}, signal)) {
        for (const record of records) if (keep(record)) kept.push(record);
      }
      return kept;
    });
  }

  /** Of the reads, unfiltered reads of a whole resource (readAll). */
  bulkReads = 0;

  private read<T>(call: () => Promise<T>): Promise<T> {
    this.reads++;
    const observed = async (): Promise<T> => {
      const startedAt = Date.now();
      try {
        const answer = await call();
        await this.options.onOutcome?.(false, startedAt);
        return answer;
      } catch (error) {
        if (breakerOutcome(error) === true) await this.options.onOutcome?.(true, startedAt, error);
        throw error;
      }
    };
    return withReadRetry(observed, this.options.retry, {
      signal: this.options.signal,
      onRetry: async (error) => {
        if (
          error instanceof AdminError &&
          error.status === 429 &&
          error.retryAfterMs !== undefined
        ) {
          await this.options.onRateLimited?.(error.retryAfterMs);
        }
      },
    });
  }
}

function cached<K, V>(cache: Map<K, Promise<V>>, key: K, load: () => Promise<V>): Promise<V> {
  let value = cache.get(key);
  if (!value) {
    value = load();
    cache.set(key, value);
    value.catch(() => cache.delete(key));
  }
  return value;
}
