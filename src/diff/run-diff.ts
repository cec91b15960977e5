/**
 * Compares two directories record by record: by natural key (group name, username, group name +
 * ACL name), references read as names, never by instance ids, the interface's quirks left out
 * (comparable.ts). Both sides are spilled to Redis first (diff-index.ts), then walked in chunks
 * with HSCAN: memory holds one chunk, whatever the size of the directories.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RESOURCE_NAMES, type ResourceName } from '../admin/resources.js';
import { hmgetMany } from '../util/redis.js';
import { referenceField, sameJson } from './comparable.js';
import { DiffIndex } from './diff-index.js';

/** A side's records, a resource's part at a time, in any order. */
export type DiffSource = AsyncIterable<{
  resource: ResourceName;
  records: readonly Record<string, unknown>[];
}>;

export interface DiffCounts {
  onlyA: number;
  onlyB: number;
  different: number;
  equal: number;
}

/** One difference: a field of a record, or a record on one side only (`field` "(record)"). */
export interface DiffRow {
  key: string;
  resource: ResourceName;
  field: string;
  a: string;
  b: string;
}

export const RECORD_FIELD = '(record)';

export interface DiffResult {
  counts: Record<ResourceName, DiffCounts>;
  equal: boolean;
}

const SCAN_COUNT = 500;

/** Runs the diff; `onRow` gets each difference as it is found. */
export async function runDiff(
  redis: Redis,
  prefix: string,
  a: DiffSource,
  b: DiffSource,
  onRow: (row: DiffRow) => Promise<void> | void,
): Promise<DiffResult> {
  // one Cluster slot per run: a side's transactions and the clean-up touch several keys
  const run = `${prefix}:diff:{${randomUUID().slice(0, 12)}}`;
  const sides = [new DiffIndex(redis, `${run}:a`), new DiffIndex(redis, `${run}:b`)] as const;
  try {
    await Promise.all([load(sides[0], a), load(sides[1], b)]);
    const counts = {} as Record<ResourceName, DiffCounts>;
    for (const resource of RESOURCE_NAMES) {
      counts[resource] = await compareResource(redis, resource, sides[0], sides[1], onRow);
    }
    const equal = Object.values(counts).every(
      (count) => count.onlyA + count.onlyB + count.different === 0,
    );
    return { counts, equal };
  } finally {
    await Promise.all(sides.map((side) => side.drop()));
  }
}

async function load(index: DiffIndex, source: DiffSource): Promise<void> {
  for await (const part of source) await index.add(part.resource, part.records);
  await index.keyAcls();
}

async function* scanHash(redis: Redis, key: string): AsyncGenerator<[string, string][]> {
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscan(key, cursor, 'COUNT', SCAN_COUNT);
    cursor = next;
    const pairs: [string, string][] = [];
    for (let index = 0; index < flat.length; index += 2)
      pairs.push([flat[index]!, flat[index + 1]!]);
    if (pairs.length > 0) yield pairs;
  } while (cursor !== '0');
}

async function compareResource(
  redis: Redis,
  resource: ResourceName,
  a: DiffIndex,
  b: DiffIndex,
  onRow: (row: DiffRow) => Promise<void> | void,
): Promise<DiffCounts> {
  const counts: DiffCounts = { onlyA: 0, onlyB: 0, different: 0, equal: 0 };
  const refField = referenceField(resource);
  const refResource = resource === 'users' ? 'groups' : 'users';
  for await (const pairs of scanHash(redis, a.recKey(resource))) {
    const keys = pairs.map(([key]) => key);
    const others = await hmgetMany(redis, b.recKey(resource), keys);
    const left = pairs.map(([, text]) => JSON.parse(text) as Record<string, unknown>);
    const right = others.map((text) =>
      text === null ? undefined : (JSON.parse(text) as Record<string, unknown>),
    );
    if (refField) {
      await nameReferences(left, refField, (ids) => a.names(refResource, ids));
      await nameReferences(
        right.filter((record) => record !== undefined),
        refField,
        (ids) => b.names(refResource, ids),
      );
    }
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      const other = right[index];
      if (other === undefined) {
        counts.onlyA++;
        await onRow({ key, resource, field: RECORD_FIELD, a: 'present', b: '' });
        continue;
      }
      const mine = left[index]!;
      let same = true;
      for (const field of new Set([...Object.keys(mine), ...Object.keys(other)])) {
        if (sameJson(mine[field], other[field])) continue;
        same = false;
        await onRow({ key, resource, field, a: shown(mine[field]), b: shown(other[field]) });
      }
      if (same) counts.equal++;
      else counts.different++;
    }
  }
  for await (const pairs of scanHash(redis, b.recKey(resource))) {
    const keys = pairs.map(([key]) => key);
    const mine = await hmgetMany(redis, a.recKey(resource), keys);
    for (let index = 0; index < keys.length; index++) {
      if (mine[index] !== null) continue;
      counts.onlyB++;
      await onRow({ key: keys[index]!, resource, field: RECORD_FIELD, a: '', b: 'present' });
    }
  }
  return counts;
}

/** Replaces the ids in each record's reference list by names, sorted. */
async function nameReferences(
  records: Record<string, unknown>[],
  field: string,
  names: (ids: string[]) => Promise<Map<string, string>>,
): Promise<void> {
  const ids = new Set<string>();
  for (const record of records) {
    const list = record[field];
    if (Array.isArray(list)) for (const id of list) ids.add(String(id));
  }
  const nameOf = await names([...ids]);
  for (const record of records) {
    const list = record[field];
    if (!Array.isArray(list)) continue;
    const named = list.map((id) => nameOf.get(String(id)) ?? `#${String(id)}`).sort();
    if (named.length === 0) delete record[field];
    else record[field] = named;
  }
}

function shown(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
