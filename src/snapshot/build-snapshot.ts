/**
 * Reads the directory in bulk into Redis before an import's first batch: one streamed GET per
 * resource, its records indexed as they arrive. Only what the import needs is kept: the records
 * whose key the upload carries (all ACLs, which are few and may be named by group name), and the
 * name ↔ id indexes its references resolve through. So Redis holds about as much per import as
 * the upload, not the whole directory. One read can make the snapshots of several imports of a
 * target at once (shared-reads.ts): each keeps what its own upload names.
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

/** What one import asks of a read of the directory: where its snapshot goes, and what it keeps. */
export interface SnapshotParticipant {
  keys: SnapshotKeys;
  /**
   * Hash whose fields are the upload's natural keys (users, groups): all of them, or, when
   * `uploadLookalikes` is given, those the producer did not keep with their form alone.
   */
  uploadKeys: string;
  /**
   * Hash of the upload's look-alike key forms ("row:key" by form), when look-alikes are refused:
   * a server key of the same form that is not the upload's key is noted in `keys.lookalikes`,
   * and one that is the upload's key is kept.
   */
  uploadLookalikes?: string;
  needs: SnapshotNeeds;
  ttlSeconds: number;
  /**
   * A sync: every server record in scope whose key the upload does not carry is kept too, and
   * its key is pushed on `missingList` (JSON `[key]`, or `[key, the upload key that looks like
   * it]`), chunk by chunk, so the records the file leaves out are found without holding the
   * directory's keys in memory.
   */
  sync?: { missingList: string; inScope: (record: Record<string, unknown>) => boolean };
  /**
   * A streamed import: its upload is not whole when the directory is read, so every server
   * record is kept, and when `lookalikes`, every server key is noted by its look-alike form
   * (form → key in `keys.lookalikes`) for its batches to compare their creates with.
   */
  whole?: { lookalikes: boolean };
  /** Whether it still waits for the read (an import whose job ended is left out from then on). */
  wanted?: () => boolean;
}

/** The one read several imports of a target and resource share (see shared-reads.ts). */
export interface DirectoryRead {
  redis: Redis;
  client: AdminClient;
  resource: ResourceName;
  signal?: AbortSignal;
}

export type BuildSnapshotOptions = DirectoryRead & SnapshotParticipant;

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
  /** Imports whose snapshots this one read of the server made, this one among them. */
  sharedBy?: number;
}

/** Server records handled per Redis round trip. */
const CHUNK = 1000;

export async function buildSnapshot(options: BuildSnapshotOptions): Promise<SnapshotSummary> {
  const [summary] = await buildSnapshots(options, [options]);
  return summary!;
}

/** A participant's counts as the read goes. */
interface Tally {
  kept: number;
  inScope: number;
  missing: number;
}

/**
 * One streamed read of the directory makes the snapshot of each participant: each keeps what its
 * own upload names, in its own keys (one pipeline each, so a Cluster's slots never mix). Returns
 * their summaries in order.
 */
export async function buildSnapshots(
  read: DirectoryRead,
  participants: readonly SnapshotParticipant[],
): Promise<SnapshotSummary[]> {
  const { redis, resource } = read;
  const started = Date.now();
  const takenAt = new Date(started).toISOString();
  const live = (): number[] =>
    participants.flatMap((one, index) => (one.wanted?.() === false ? [] : [index]));
  // a snapshot taken again (its job was retried) starts from nothing; an import that left the
  // read is not touched (another worker may have taken its preparation over)
  const present = live().map((index) => participants[index]!);
  await Promise.all(
    present.map((one) =>
      redis.unlink(...snapshotKeyList(one.keys), ...(one.sync ? [one.sync.missingList] : [])),
    ),
  );
  let records = 0;
  const tallies: Tally[] = participants.map(() => ({ kept: 0, inScope: 0, missing: 0 }));
  // which participants hold keys in the keys hash (see uploadNames); read once
  const keyHashes = new Map<SnapshotParticipant, boolean>();
  await Promise.all(
    present.map(async (one) => {
      keyHashes.set(one, (await redis.exists(one.uploadKeys)) === 1);
    }),
  );
  const checking = participants.some(
    (one) => one.uploadLookalikes !== undefined || one.whole?.lookalikes === true,
  );

  // the index of the other resource (names in references) is read beside the main one, on a
  // second connection when the client has one: one round trip of the server's latency instead of
  // two; the first stream to fail stops the others, and its error is the one thrown
  const stop = new AbortController();
  const signal = read.signal ? AbortSignal.any([read.signal, stop.signal]) : stop.signal;
  const each = { ...read, signal };
  let failure: { error: unknown } | undefined;
  const watched = (stream: Promise<void>): Promise<void> =>
    stream.catch((error: unknown) => {
      failure ??= { error };
      stop.abort(error);
    });
  /** Runs `write` for each live participant that `wants`, with a pipeline of its own. */
  const forEach = (
    wants: (one: SnapshotParticipant) => boolean,
    write: (one: SnapshotParticipant, pipeline: ChainableCommander, tally: Tally) => Promise<void>,
  ): Promise<void[]> =>
    Promise.all(
      live()
        .filter((index) => wants(participants[index]!))
        .map(async (index) => {
          const one = participants[index]!;
          const pipeline = redis.pipeline();
          await write(one, pipeline, tallies[index]!);
          // one that left while its chunk was read writes nothing more
          if (one.wanted?.() !== false) await send(pipeline);
        }),
    );
  const index: Promise<void>[] = [];
  if (resource !== 'groups' && participants.some((one) => one.needs.groupIndex)) {
    index.push(
      watched(
        streamInChunks(each, 'groups', async (chunk) => {
          await forEach(
            (one) => one.needs.groupIndex,
            async (one, pipeline) => indexGroups(pipeline, one.keys, chunk),
          );
        }),
      ),
    );
  }
  if (resource !== 'users' && participants.some((one) => one.needs.userIndex)) {
    index.push(
      watched(
        streamInChunks(each, 'users', async (chunk) => {
          await forEach(
            (one) => one.needs.userIndex,
            async (one, pipeline) => indexUsers(pipeline, one.keys, chunk),
          );
        }),
      ),
    );
  }
  const keyField = resource === 'users' ? 'username' : 'name';
  const main = watched(
    streamInChunks(each, resource, async (chunk) => {
      records += chunk.length;
      if (resource === 'acls') {
        const encoded = chunk.map((acl) => encodeCompact(resource, acl));
        await forEach(
          () => true,
          async (one, pipeline, tally) => {
            chunk.forEach((acl, at) => {
              pipeline.hset(one.keys.records, aclIdField(String(acl.id)), encoded[at]!);
              if (typeof acl.groupId === 'number' && typeof acl.name === 'string') {
                pipeline.hset(
                  one.keys.records,
                  aclNameField(acl.groupId, acl.name),
                  String(acl.id),
                );
              }
            });
            tally.kept += chunk.length;
          },
        );
        return;
      }
      const names = chunk.map((record) => String(record[keyField] ?? ''));
      const forms = checking ? names.map(lookalikeKey) : [];
      await forEach(
        () => true,
        async (one, pipeline, tally) => {
          if (one.whole) {
            keepWhole(pipeline, one.keys, resource, chunk, names, one.whole.lookalikes && forms);
            tally.kept += chunk.length;
            if (resource === 'groups' && one.needs.groupIndex)
              indexGroups(pipeline, one.keys, chunk);
            if (resource === 'users' && one.needs.userIndex) indexUsers(pipeline, one.keys, chunk);
            return;
          }
          const { named, lookalikeOf } = await uploadNames(
            redis,
            one,
            keyHashes.get(one) === true,
            names,
            forms,
          );
          chunk.forEach((record, at) => {
            if (!named[at]) return;
            pipeline.hset(one.keys.records, names[at]!, encodeCompact(resource, record));
            tally.kept++;
          });
          for (const [at, uploadKey] of lookalikeOf) {
            pipeline.hset(one.keys.lookalikes, uploadKey, names[at]!);
          }
          const { sync } = one;
          if (sync) {
            const absent: string[] = [];
            chunk.forEach((record, at) => {
              if (!sync.inScope(record)) return;
              tally.inScope++;
              if (named[at]) return;
              const name = names[at]!;
              pipeline.hset(one.keys.records, name, encodeCompact(resource, record));
              const look = lookalikeOf.get(at);
              absent.push(JSON.stringify(look === undefined ? [name] : [name, look]));
            });
            if (absent.length > 0) pipeline.rpush(sync.missingList, ...absent);
            tally.missing += absent.length;
          }
          if (resource === 'groups' && one.needs.groupIndex) indexGroups(pipeline, one.keys, chunk);
          if (resource === 'users' && one.needs.userIndex) indexUsers(pipeline, one.keys, chunk);
        },
      );
    }),
  );
  await Promise.all([main, ...index]);
  if (failure) throw failure.error;
  // every participant's keys expire, those of one that left too (it may have written some)
  await Promise.all(
    participants.map(async (one) => {
      const pipeline = redis.pipeline();
      for (const key of snapshotKeyList(one.keys)) pipeline.expire(key, one.ttlSeconds);
      if (one.sync) pipeline.expire(one.sync.missingList, one.ttlSeconds);
      await send(pipeline);
    }),
  );
  const durationMs = Date.now() - started;
  return participants.map((one, at) => {
    const tally = tallies[at]!;
    const summary: SnapshotSummary = { takenAt, records, kept: tally.kept, durationMs };
    if (participants.length > 1) summary.sharedBy = participants.length;
    return one.sync ? { ...summary, inScope: tally.inScope, missing: tally.missing } : summary;
  });
}

/** A streamed import's snapshot: every server record, and every key by its form when `forms`. */
function keepWhole(
  pipeline: ChainableCommander,
  keys: SnapshotKeys,
  resource: ResourceName,
  chunk: Record<string, unknown>[],
  names: readonly string[],
  forms: readonly string[] | false,
): void {
  const records: string[] = [];
  chunk.forEach((record, at) => records.push(names[at]!, encodeCompact(resource, record)));
  if (records.length > 0) pipeline.hset(keys.records, ...records);
  if (!forms || forms.length === 0) return;
  const byForm: string[] = [];
  forms.forEach((form, at) => byForm.push(form, names[at]!));
  pipeline.hset(keys.lookalikes, ...byForm);
}

/**
 * Which server keys (`names`) the upload names, and for each server key whose look-alike form
 * (`forms`) a different upload key claimed, that upload key. An upload that compares look-alikes
 * keeps its keys in its forms' hash ("row:key" by form), which answers both in one read; keys
 * without a form, and every key of an upload that does not compare, are in the keys hash.
 */
async function uploadNames(
  redis: Redis,
  one: SnapshotParticipant,
  keysHash: boolean,
  names: readonly string[],
  forms: readonly string[],
): Promise<{ named: boolean[]; lookalikeOf: Map<number, string> }> {
  const [rows, claims] = await Promise.all([
    keysHash ? redis.hmget(one.uploadKeys, ...names) : undefined,
    one.uploadLookalikes ? redis.hmget(one.uploadLookalikes, ...forms) : undefined,
  ]);
  const named = new Array<boolean>(names.length).fill(false);
  const lookalikeOf = new Map<number, string>();
  for (let at = 0; at < names.length; at++) {
    if (rows?.[at] != null) named[at] = true;
    const claim = claims?.[at];
    if (claim == null) continue;
    const uploadKey = claim.slice(claim.indexOf(':') + 1);
    if (uploadKey === names[at]) named[at] = true;
    else lookalikeOf.set(at, uploadKey);
  }
  return { named, lookalikeOf };
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
  /**
   * Hash of the upload's look-alike key forms, as for a snapshot; none for a streamed import,
   * whose upload is not whole: every server key is then noted by its form (form → key).
   */
  uploadLookalikes?: string;
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
  await streamInChunks(options, resource, async (chunk) => {
    records += chunk.length;
    const names = chunk.map((record) => String(record[keyField] ?? ''));
    const pipeline = redis.pipeline();
    if (options.uploadLookalikes === undefined) {
      const byForm = names.flatMap((name) => [lookalikeKey(name), name]);
      if (byForm.length > 0) pipeline.hset(options.lookalikes, ...byForm);
    } else {
      await noteLookalikes(redis, pipeline, options.uploadLookalikes, options.lookalikes, names);
    }
    await send(pipeline);
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

/** Sends a pipeline that holds commands; the first command Redis refused is thrown. */
async function send(pipeline: ChainableCommander): Promise<void> {
  if (pipeline.length === 0) return;
  for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
}

/** Streams every record of a resource, handing them on in chunks. */
async function streamInChunks(
  options: Pick<DirectoryRead, 'client' | 'signal'>,
  resource: ResourceName,
  handle: (chunk: Record<string, unknown>[]) => Promise<void>,
): Promise<void> {
  let chunk: Record<string, unknown>[] = [];
  for await (const record of options.client.stream(resource, {}, options.signal)) {
    chunk.push(record as Record<string, unknown>);
    if (chunk.length >= CHUNK) {
      await handle(chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) await handle(chunk);
}
