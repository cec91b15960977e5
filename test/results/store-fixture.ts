/** A store on a fresh prefix of the test Redis, and small builders for results and records. */
import { Redis } from 'ioredis';
import type {
  ImportOptions,
  RecordResult,
  ResultStatus,
  StagedRecord,
} from '../../src/model/import.js';
import { ImportStore } from '../../src/results/import-store.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

export const OPTIONS: ImportOptions = {
  resource: 'users',
  mode: 'upsert',
  batchSize: 100,
  listSeparator: '|',
  emptyAsClear: false,
  allowAdmin: false,
};

export interface StoreFixture {
  redis: Redis;
  store: ImportStore;
  prefix: string;
  /** Another connection and store on the same prefix, as a second worker would have. */
  connect(): ImportStore;
  close(): Promise<void>;
}

export function storeFixture(label: string, ttlSeconds = 3600): StoreFixture {
  const url = testRedisUrl();
  const prefix = freshPrefix(label);
  const connections: Redis[] = [];
  const connect = (): ImportStore => {
    const redis = new Redis(url, { maxRetriesPerRequest: 3 });
    connections.push(redis);
    return new ImportStore({ redis, prefix, ttlSeconds });
  };
  const store = connect();
  return {
    redis: connections[0],
    store,
    prefix,
    connect,
    async close() {
      await deletePrefix(url, prefix);
      await Promise.all(connections.map((redis) => redis.quit()));
    },
  };
}

export function result(row: number, status: ResultStatus = 'succeeded'): RecordResult {
  return {
    row,
    line: row + 1,
    key: `user${row}`,
    action: 'create',
    status,
    ...(status === 'failed' ? { errorCode: 'ALREADY_EXISTS', error: 'exists' } : {}),
    attempts: 1,
    input: { username: `user${row}`, email: `user${row}@example.com` },
  };
}

export function results(rows: number[], status: ResultStatus = 'succeeded'): RecordResult[] {
  return rows.map((row) => result(row, status));
}

export function staged(row: number): StagedRecord {
  return {
    row,
    line: row + 1,
    input: { username: `user${row}` },
    record: { username: `user${row}` },
  };
}

export function range(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, index) => first + index);
}
