/**
 * Reads the directory in bulk into Redis before an import's first batch: one streamed GET per
 * resource, its records indexed as they arrive. Only what the import needs is kept: the records
 * whose key the upload carries (all ACLs, which are few and may be named by group name), and the
 * name ↔ id indexes its references resolve through. So Redis holds about as much per import as
 * the upload, not the whole directory.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type { AdminClient } from '../admin/client.js';
import type { ResourceName } from '../admin/resources.js';
import { lookalikeKey } from '../ingest/lookalike.js';
import { encodeCompact } from './record-codec.js';
import { aclIdField, aclNameField, snapshotKeyList, type SnapshotKeys } from './snapshot-keys.js';

export interface SnapshotNeeds {
  /** Every group's name and id: users name their groups, ACLs their group. */
  groupIndex: boolean;
  /** Every user's name and id: a groups upload names its members. */
  userIndex: boolean;
}

export interface BuildSnapshotOptions {
  redis: Redis;
  client: AdminClient;
  keys: SnapshotKeys;
  resource: ResourceName;
  /** Hash whose fields are the upload's natural keys (users, groups). */
  uploadKeys: string;
  /**
   * Hash of the upload's look-alike key forms ("row:key" by form), when look-alikes are refused:
   * a server key of the same form that is not the upload's key is noted in `keys.lookalikes`.
   */
  uploadLookalikes?: string;
  needs: SnapshotNeeds;
  ttlSeconds: number;
  signal?: AbortSignal;
  /**
   * A sync: every server record in scope whose key the upload does not carry is kept too, and
   * its key is pushed on `missingList` (JSON `[key]`, or `[key, the upload key that looks like
   * it]`), chunk by chunk, so the records the file leaves out are found without holding the
   * directory's keys in memory.
   */
  sync?: { missingList: string; inScope: (record: Record<string, unknown>) => boolean };
}

export interface SnapshotSummary {
  /** When the read began (ISO): changes on the server after it are not in the snapshot. */
  takenAt: string;
  /** Records of the import's resource on the server. */
  records: number;
  /** Of them, records kept because the upload names them. */
  kept: number;
  durationMs: number;
  /** A sync: server records in scope, and of them those the upload does not carry. */
  inScope?: number;
  missing?: number;
}

/** Server records handled per Redis round trip. */
const CHUNK = 1000;

export async function buildSnapshot(options: BuildSnapshotOptions): Promise<SnapshotSummary> {
  const { redis, keys, resource } = options;
  const started = Date.now();
  const takenAt = new Date(started).toISOString();
  // a snapshot taken again (its job was retried) starts from nothing
  await redis.unlink(...snapshotKeyList(keys));
  let records = 0;
  let kept = 0;
  let inScope = 0;
  let missing = 0;
  const { sync } = options;
  if (sync) await redis.unlink(sync.missingList);

  // the index of the other resource (names in references) is read beside the main one, on a
  // second connection when the client has one: one round trip of the server's latency instead of
  // two; the first stream to fail stops the others, and its error is the one thrown
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const each = { ...options, signal };
  let failure: { error: unknown } | undefined;
  const watched = (stream: Promise<void>): Promise<void> =>
    stream.catch((error: unknown) => {
      failure ??= { error };
      stop.abort(error);
    });
  const index: Promise<void>[] = [];
  if (options.needs.groupIndex && resource !== 'groups') {
    index.push(
      watched(
        streamInChunks(each, 'groups', async (chunk, pipeline) =>
          indexGroups(pipeline, keys, chunk),
        ),
      ),
    );
  }
  if (options.needs.userIndex && resource !== 'users') {
    index.push(
      watched(
        streamInChunks(each, 'users', async (chunk, pipeline) => indexUsers(pipeline, keys, chunk)),
      ),
    );
  }
  const main = watched(
    streamInChunks(each, resource, async (chunk, pipeline) => {
      records += chunk.length;
      if (resource === 'acls') {
        for (const acl of chunk) {
          pipeline.hset(keys.records, aclIdField(String(acl.id)), encodeCompact(resource, acl));
          if (typeof acl.groupId === 'number' && typeof acl.name === 'string') {
            pipeline.hset(keys.records, aclNameField(acl.groupId, acl.name), String(acl.id));
          }
        }
        kept += chunk.length;
        return;
      }
      const keyField = resource === 'users' ? 'username' : 'name';
      const names = chunk.map((record) => String(record[keyField] ?? ''));
      const rows = await redis.hmget(options.uploadKeys, ...names);
      chunk.forEach((record, index) => {
        if (rows[index] === null) return;
        pipeline.hset(keys.records, names[index]!, encodeCompact(resource, record));
        kept++;
      });
      const lookalikeOf = options.uploadLookalikes
        ? await noteLookalikes(redis, pipeline, options.uploadLookalikes, keys.lookalikes, names)
        : new Map<number, string>();
      if (sync) {
        const absent: string[] = [];
        chunk.forEach((record, index) => {
          if (!sync.inScope(record)) return;
          inScope++;
          if (rows[index] !== null) return;
          const name = names[index]!;
          pipeline.hset(keys.records, name, encodeCompact(resource, record));
          const look = lookalikeOf.get(index);
          absent.push(JSON.stringify(look === undefined ? [name] : [name, look]));
        });
        if (absent.length > 0) pipeline.rpush(sync.missingList, ...absent);
        missing += absent.length;
      }
      if (resource === 'groups' && options.needs.groupIndex) indexGroups(pipeline, keys, chunk);
      if (resource === 'users' && options.needs.userIndex) indexUsers(pipeline, keys, chunk);
    }),
  );
  await Promise.all([main, ...index]);
  if (failure) throw failure.error;
  const expiry = redis.pipeline();
  for (const key of snapshotKeyList(keys)) expiry.expire(key, options.ttlSeconds);
  if (sync) expiry.expire(sync.missingList, options.ttlSeconds);
  await expiry.exec();
  const summary: SnapshotSummary = { takenAt, records, kept, durationMs: Date.now() - started };
  return sync ? { ...summary, inScope, missing } : summary;
}

/**
 * Notes, for each server key whose look-alike form an upload key has and that is not that key,
 * the upload key → the server key in `lookalikes`; returns them by the server key's index.
 */
async function noteLookalikes(
  redis: Redis,
  pipeline: ChainableCommander,
  uploadLookalikes: string,
  lookalikes: string,
  names: string[],
): Promise<Map<number, string>> {
  const lookalikeOf = new Map<number, string>();
  const claimed = await redis.hmget(uploadLookalikes, ...names.map(lookalikeKey));
  claimed.forEach((claim, index) => {
    if (claim === null) return;
    const uploadKey = claim.slice(claim.indexOf(':') + 1);
    if (uploadKey === names[index]) return;
    pipeline.hset(lookalikes, uploadKey, names[index]!);
    lookalikeOf.set(index, uploadKey);
  });
  return lookalikeOf;
}

export interface ScanLookalikesOptions {
  redis: Redis;
  client: AdminClient;
  resource: 'users' | 'groups';
  /** Hash of the upload's look-alike key forms, as for a snapshot. */
  uploadLookalikes: string;
  /** Where the matches go: upload key → server key (the snapshot's `lookalikes` hash). */
  lookalikes: string;
  ttlSeconds: number;
  signal?: AbortSignal;
}

/**
 * For an import that reads record by record: every key on the server is compared with the
 * upload's look-alike forms as it streams in, and only the matches are kept, so the look-alike
 * check holds in every lookup mode while Redis holds no more than the matches. Returns the
 * number of server records read.
 */
export async function scanLookalikes(options: ScanLookalikesOptions): Promise<number> {
  const { redis, resource } = options;
  await redis.unlink(options.lookalikes);
  let records = 0;
  const keyField = resource === 'users' ? 'username' : 'name';
  await streamInChunks(options, resource, async (chunk, pipeline) => {
    records += chunk.length;
    const names = chunk.map((record) => String(record[keyField] ?? ''));
    await noteLookalikes(redis, pipeline, options.uploadLookalikes, options.lookalikes, names);
  });
  await redis.expire(options.lookalikes, options.ttlSeconds);
  return records;
}

/** Adds records to a name → id and an id → name hash (groups by name, users by username). */
function indexNames(
  pipeline: ChainableCommander,
  hashes: { ids: string; names: string },
  records: Record<string, unknown>[],
  fields: { name: string; id: string },
): void {
  const byName: string[] = [];
  const byId: string[] = [];
  for (const record of records) {
    const name = record[fields.name];
    if (typeof name !== 'string') continue;
    byName.push(name, String(record[fields.id]));
    byId.push(String(record[fields.id]), name);
  }
  if (byName.length > 0) pipeline.hset(hashes.ids, ...byName).hset(hashes.names, ...byId);
}

const indexGroups = (
  pipeline: ChainableCommander,
  keys: SnapshotKeys,
  groups: Record<string, unknown>[],
): void =>
  indexNames(pipeline, { ids: keys.groupIds, names: keys.groupNames }, groups, {
    name: 'name',
    id: 'id',
  });

const indexUsers = (
  pipeline: ChainableCommander,
  keys: SnapshotKeys,
  users: Record<string, unknown>[],
): void =>
  indexNames(pipeline, { ids: keys.userIds, names: keys.userNames }, users, {
    name: 'username',
    id: 'userId',
  });

/** Streams every record of a resource, handing them on in chunks with a pipeline to fill. */
async function streamInChunks(
  options: Pick<BuildSnapshotOptions, 'redis' | 'client' | 'signal'>,
  resource: ResourceName,
  handle: (chunk: Record<string, unknown>[], pipeline: ChainableCommander) => Promise<void>,
): Promise<void> {
  let chunk: Record<string, unknown>[] = [];
  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    const pipeline = options.redis.pipeline();
    await handle(chunk, pipeline);
    chunk = [];
    if (pipeline.length > 0) {
      for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
    }
  };
  for await (const record of options.client.stream(resource, {}, options.signal)) {
    chunk.push(record as Record<string, unknown>);
    if (chunk.length >= CHUNK) await flush();
  }
  await flush();
}
