/**
 * Sandbox write throughput: starts a sandbox on port 0, then creates (POST), updates (PUT)
 * and deletes (DELETE) N users through the AdminClient in batches, with several requests in
 * flight, and prints records/s for each phase. Client and sandbox share this process, so the
 * figure is a floor for the sandbox alone.
 *
 * `--seed-users` pre-seeds a store of that size (a comma-separated list runs one fresh sandbox
 * per size) and measures the N writes on top of it; `--persist` gives each sandbox a fresh
 * data file in a temp directory, removed afterwards, so the cost of persistence at that size shows.
 *
 *   npx tsx bench/sandbox-throughput.ts [--records 100000] [--batch 100] [--concurrency 8]
 *                                       [--encoding multipart|urlencoded] [--data FILE]
 *                                       [--seed-users 0[,20000,1000000]] [--persist]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AdminClient } from '../src/admin/client.js';
import type { UserRecord } from '../src/admin/schemas.js';
import { startSandbox } from '../src/sandbox/server.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8' },
    encoding: { type: 'string', default: 'multipart' },
    data: { type: 'string' },
    'seed-users': { type: 'string', default: '0' },
    persist: { type: 'boolean', default: false },
  },
});
const total = Number(values.records);
const batchSize = Number(values.batch);
const concurrency = Number(values.concurrency);
const encoding = values.encoding === 'urlencoded' ? 'urlencoded' : 'multipart';
const seedSizes = values['seed-users'].split(',').map(Number);
/** Groups seeded beside the users, so seeded users have memberships to persist. */
const SEED_GROUPS = 20;

/** Sends every batch with at most `concurrency` requests in flight. */
async function run(
  batches: UserRecord[][],
  send: (batch: UserRecord[]) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < batches.length) {
      const batch = batches[next++];
      if (batch) await send(batch);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

function inBatches(records: UserRecord[]): UserRecord[][] {
  const batches: UserRecord[][] = [];
  for (let start = 0; start < records.length; start += batchSize) {
    batches.push(records.slice(start, start + batchSize));
  }
  return batches;
}

async function phase(
  name: string,
  records: UserRecord[],
  send: (batch: UserRecord[]) => Promise<unknown>,
): Promise<number> {
  const started = performance.now();
  await run(inBatches(records), send);
  const seconds = (performance.now() - started) / 1000;
  const rate = Math.round(records.length / seconds);
  console.log(
    `${name.padEnd(10)} ${records.length} records in ${seconds.toFixed(2)} s: ${rate} records/s`,
  );
  return seconds;
}

/** One fresh sandbox holding `seedUsers` users, and the three write phases on top of it. */
async function measure(seedUsers: number): Promise<void> {
  const dir = values.persist ? await mkdtemp(join(tmpdir(), 'porter-bench-sandbox-')) : undefined;
  const dataFile = dir ? join(dir, 'state.ndjson') : values.data;
  const started = performance.now();
  const sandbox = await startSandbox({
    port: 0,
    dataFile,
    seed: seedUsers > 0 ? { users: seedUsers, groups: SEED_GROUPS } : undefined,
  });
  const client = new AdminClient({
    baseUrl: sandbox.url,
    connections: concurrency,
    bodyEncoding: encoding,
    // A save of a large state may hold an answer for minutes; the bench measures it, not gives up.
    requestTimeoutMs: 30 * 60_000,
  });
  console.log(
    `sandbox ${sandbox.url}: ${seedUsers} users seeded in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
      `${total} users written, batches of ${batchSize}, ${concurrency} in flight, ${encoding}` +
      (dataFile ? `, data file ${dataFile}` : ', memory only'),
  );
  try {
    const users: UserRecord[] = Array.from({ length: total }, (_, index) => ({
      username: `bench.user${index}`,
      firstName: 'Bench',
      lastName: `User ${index}`,
      email: `bench.user${index}@example.com`,
      dept: 'Benchmarks',
    }));
    const created: number[] = [];
    let seconds = await phase('POST', users, async (batch) => {
      for (const user of await client.postUsers(batch)) created.push(user.userId as number);
    });
    const updates = created.map((userId) => ({
      ...sandbox.store.user(userId),
      dept: 'Updated',
      city: 'Lyon',
    }));
    seconds += await phase('PUT update', updates, (batch) => client.putUsers(batch));
    const deletes = created.map((userId) => ({ userId }));
    seconds += await phase('DELETE', deletes, (batch) => client.deleteUsers(batch));
    console.log(`overall    ${3 * total} records: ${Math.round((3 * total) / seconds)} records/s`);
    if (sandbox.store.counts().users !== seedUsers) throw new Error('bench users left over');
  } finally {
    await client.close();
    await sandbox.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

for (const seedUsers of seedSizes) await measure(seedUsers);
