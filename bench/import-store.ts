/**
 * What an import's records cost Redis and the process that writes them, through the import
 * store alone (no server, no queue): N records staged in chunks of 1,000 as a producer stages
 * them, then each batch read, asked which of its rows have no result, and given its results, as
 * a worker does. Redis is a private redis-server on a free port (its CPU from INFO cpu is the
 * run's alone), or, without redis-server on PATH, the one at REDIS_URL under a key prefix of its
 * own (its CPU then counts every other client too).
 *
 *   npx tsx bench/import-store.ts [--rows 100000] [--batch-size 100] [--json]
 *
 * Prints, per record: Redis CPU (user + system) and this process's CPU, for staging and for the
 * batches; Redis bytes per record once everything is staged, and once the import settled.
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startLocalRedis } from '../src/app/local-redis.js';
import type { ImportOptions, StagedRecord } from '../src/model/import.js';
import { ImportStore } from '../src/results/import-store.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    'batch-size': { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
});
const rows = Number(values.rows);
const batchSize = Number(values['batch-size']);
const STAGE_CHUNK = 1000;
const COLUMNS = ['username', 'firstName', 'lastName', 'email', 'dept'];

const local = await startLocalRedis();
// as porter's own connections for commands (src/redis/connect.ts)
const redis = new Redis(local?.url ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  enableAutoPipelining: true,
});
const prefix = `bench-store-${process.pid}`;
const store = new ImportStore({ redis, prefix, ttlSeconds: 600 });

async function redisCpu(): Promise<number> {
  const info = await redis.info('cpu');
  const read = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1]);
  return read('used_cpu_user') + read('used_cpu_sys');
}

async function usedMemory(): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}

/** Redis's and this process's CPU per record (µs) over `run`. */
async function cost(run: () => Promise<void>): Promise<{ redis: number; client: number }> {
  const redisBefore = await redisCpu();
  const clientBefore = process.cpuUsage();
  await run();
  const client = process.cpuUsage(clientBefore);
  const redisAfter = await redisCpu();
  return {
    redis: ((redisAfter - redisBefore) * 1e6) / rows,
    client: (client.user + client.system) / rows,
  };
}

function input(row: number): Record<string, string> {
  return {
    username: `bench.user${row}`,
    firstName: `First${row}`,
    lastName: `Last${row}`,
    email: `user${row}@example.com`,
    dept: `Dept ${row % 40}`,
  };
}

const options: ImportOptions = {
  resource: 'users',
  mode: 'create',
  batchSize,
  listSeparator: '|',
  emptyAsClear: false,
  allowAdmin: false,
};
const memoryBefore = await usedMemory();
const info = await store.create({ options, columns: COLUMNS });

const staging = await cost(async () => {
  for (let start = 1; start <= rows; start += STAGE_CHUNK) {
    const items: StagedRecord[] = [];
    for (let row = start; row < Math.min(start + STAGE_CHUNK, rows + 1); row++) {
      const values = input(row);
      items.push({ row, line: row + 1, input: values, record: values });
    }
    await store.stage(info.id, items);
  }
});
const stagedBytes = ((await usedMemory()) - memoryBefore) / rows;
await store.markReceived(info.id, { total: rows, batches: Math.ceil(rows / batchSize) });

const batches = await cost(async () => {
  for (let start = 0; start < rows; start += batchSize) {
    const staged = await store.readStaged(info.id, start, batchSize);
    const missing = new Set(
      await store.missingRows(
        info.id,
        staged.map((record) => record.row),
      ),
    );
    const results = staged
      .filter((record) => missing.has(record.row))
      .map((record) => ({
        row: record.row,
        line: record.line,
        status: 'succeeded' as const,
        action: 'create' as const,
        key: record.record.username as string,
        id: 1_000_000 + record.row,
        attempts: 1,
        input: record.input,
      }));
    await store.recordResults(info.id, results, { columns: COLUMNS, options });
  }
});
const settled = await store.get(info.id);
const settledBytes = ((await usedMemory()) - memoryBefore) / rows;
if (settled?.state !== 'completed' || settled.counts.succeeded !== rows) {
  console.error(
    `FAIL: the import ended ${settled?.state} with ${settled?.counts.succeeded} succeeded`,
  );
  process.exitCode = 1;
}

const figures = {
  rows,
  batchSize,
  redis: local ? 'private' : 'shared',
  stagingRedisUs: staging.redis,
  stagingClientUs: staging.client,
  batchesRedisUs: batches.redis,
  batchesClientUs: batches.client,
  stagedBytesPerRecord: stagedBytes,
  settledBytesPerRecord: settledBytes,
};
const lines = [
  `${rows} records, batch size ${batchSize}, Redis ${figures.redis}`,
  `staging:        Redis ${staging.redis.toFixed(2)} µs/record, this process ${staging.client.toFixed(2)} µs/record`,
  `the batches:    Redis ${batches.redis.toFixed(2)} µs/record, this process ${batches.client.toFixed(2)} µs/record (read, missing rows, results)`,
  `Redis memory:   ${stagedBytes.toFixed(0)} B/record staged, ${settledBytes.toFixed(0)} B/record settled`,
];
if (values.json) {
  console.error(lines.join('\n'));
  console.log(JSON.stringify(figures));
} else console.log(lines.join('\n'));

await store.delete(info.id);
await redis.quit();
await local?.stop();
