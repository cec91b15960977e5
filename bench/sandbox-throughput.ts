/**
 * Sandbox write throughput: starts a sandbox on port 0, then creates (POST), updates (PUT)
 * and deletes (DELETE) N users through the AdminClient in batches, with several requests in
 * flight, and prints records/s for each phase. Client and sandbox share this process, so the
 * figure is a floor for the sandbox alone.
 *
 *   npx tsx bench/sandbox-throughput.ts [--records 100000] [--batch 100] [--concurrency 8]
 *                                       [--encoding multipart|urlencoded] [--data FILE]
 */
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
  },
});
const total = Number(values.records);
const batchSize = Number(values.batch);
const concurrency = Number(values.concurrency);
const encoding = values.encoding === 'urlencoded' ? 'urlencoded' : 'multipart';

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

const sandbox = await startSandbox({ port: 0, dataFile: values.data });
const client = new AdminClient({
  baseUrl: sandbox.url,
  connections: concurrency,
  bodyEncoding: encoding,
});
console.log(
  `sandbox ${sandbox.url}: ${total} users, batches of ${batchSize}, ${concurrency} in flight, ${encoding}` +
    (values.data ? `, data file ${values.data}` : ', memory only'),
);
try {
  const users: UserRecord[] = Array.from({ length: total }, (_, index) => ({
    username: `bench.user${index}`,
    firstName: 'Bench',
    lastName: `User ${index}`,
    email: `bench.user${index}@example.com`,
    dept: 'Benchmarks',
  }));
  let seconds = await phase('POST', users, (batch) => client.postUsers(batch));
  const updates = sandbox.store.users().map((user) => ({ ...user, dept: 'Updated', city: 'Lyon' }));
  seconds += await phase('PUT update', updates, (batch) => client.putUsers(batch));
  const deletes = updates.map((user) => ({ userId: user.userId }));
  seconds += await phase('DELETE', deletes, (batch) => client.deleteUsers(batch));
  console.log(`overall    ${3 * total} records: ${Math.round((3 * total) / seconds)} records/s`);
  if (sandbox.store.counts().users !== 0) throw new Error('users left over after DELETE');
} finally {
  await client.close();
  await sandbox.close();
}
