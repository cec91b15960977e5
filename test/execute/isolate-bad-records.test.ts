import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminHttpError } from '../../src/admin/errors.js';
import { DEFAULT_RETRY_POLICY } from '../../src/execute/retry-policy.js';
import { executeOps } from '../../src/execute/execute-batch.js';
import { RecordLookup } from '../../src/plan/lookup.js';
import { planBatch } from '../../src/plan/plan-batch.js';
import type { StagedRecord } from '../../src/model/import.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const retry = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1, maxDelayMs: 5 };
let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

type Write = TestSandbox['client']['write'];

/** The sandbox's client with every write passed through `around`: a server that answers otherwise. */
function aroundWrites(
  around: (write: Write, ...args: Parameters<Write>) => ReturnType<Write>,
): TestSandbox['client'] {
  return new Proxy(sandbox.client, {
    get(target, property, receiver) {
      if (property !== 'write') return Reflect.get(target, property, receiver) as unknown;
      return (...args: Parameters<Write>) => around(target.write.bind(target), ...args);
    },
  });
}

/** The sandbox's client with each refusal of a write replaced by what `change` makes of it. */
function changingRefusals(
  change: (error: AdminHttpError) => AdminHttpError | undefined,
): TestSandbox['client'] {
  return aroundWrites(async (write, ...args) => {
    try {
      return await write(...args);
    } catch (error) {
      throw (error instanceof AdminHttpError ? change(error) : undefined) ?? error;
    }
  });
}

const BAD_ROWS = new Set([137, 512, 990]);

function users(prefix: string, n: number): StagedRecord[] {
  return Array.from({ length: n }, (_, index) => {
    const row = index + 1;
    // a group id that does not exist: the server refuses that record
    const record = BAD_ROWS.has(row)
      ? { username: `${prefix}${row}`, groups: [987_654] }
      : { username: `${prefix}${row}` };
    return { row, input: { username: `${prefix}${row}` }, record };
  });
}

describe.each(['atomic', 'partial'] as const)(
  'a 1,000-record batch with 3 bad records (%s server)',
  (batchFailure) => {
    it.each(['create', 'upsert'] as const)(
      '%s: 997 succeeded, 3 failed with the server reason, calls within k·log2(n)',
      async (mode) => {
        sandbox.sandbox.setFaults({ batchFailure });
        const prefix = `${batchFailure}.${mode}.`;
        const lookup = new RecordLookup({ client: sandbox.client, retry });
        const plan = await planBatch(users(prefix, 1_000), {
          resource: 'users',
          mode,
          allowAdmin: false,
          lookup,
        });
        expect(plan.ops).toHaveLength(1_000);
        const { results, stats } = await executeOps(plan.ops, {
          client: sandbox.client,
          resource: 'users',
          lookup,
          retry,
        });
        const byStatus = new Map<string, typeof results>();
        for (const result of results)
          byStatus.set(result.status, [...(byStatus.get(result.status) ?? []), result]);
        expect(byStatus.get('succeeded')?.length).toBe(997);
        expect(
          byStatus
            .get('failed')
            ?.map((result) => result.row)
            .sort((a, b) => a - b),
        ).toEqual([...BAD_ROWS]);
        for (const failed of byStatus.get('failed') ?? []) expect(failed.error).toMatch(/987654/);
        const bound = 1 + BAD_ROWS.size * Math.ceil(Math.log2(1_000));
        console.log(
          `${batchFailure} ${mode}: ${stats.writeCalls} write calls (bound ${bound}), ${stats.reconcileReads} reconcile reads`,
        );
        expect(stats.writeCalls).toBeLessThanOrEqual(bound);
        // exactly the good records exist, once each
        const created = sandbox.store.users().filter((user) => user.username?.startsWith(prefix));
        expect(created).toHaveLength(997);
        expect(new Set(created.map((user) => user.username)).size).toBe(997);
      },
    );
  },
);

describe('a server that names no index in its refusals', () => {
  it.each(['atomic', 'partial'] as const)(
    '%s: 997 succeeded, 3 failed, within 2·k·log2(n) calls and about n reads',
    async (batchFailure) => {
      sandbox.sandbox.setFaults({ batchFailure });
      const prefix = `noindex.${batchFailure}.`;
      // the same refusals, without the index: porter can only halve
      const client = changingRefusals((error) =>
        error.index === undefined
          ? undefined
          : new AdminHttpError(error.message, {
              method: error.method,
              path: error.path,
              status: error.status ?? 400,
              errorcode: error.errorcode,
            }),
      );
      const lookup = new RecordLookup({ client, retry });
      const plan = await planBatch(users(prefix, 1_000), {
        resource: 'users',
        mode: 'create',
        allowAdmin: false,
        lookup,
      });
      const { results, stats } = await executeOps(plan.ops, {
        client,
        resource: 'users',
        lookup,
        retry,
      });
      expect(results.filter((result) => result.status === 'succeeded')).toHaveLength(997);
      expect(
        results
          .filter((result) => result.status === 'failed')
          .map((result) => result.row)
          .sort((a, b) => a - b),
      ).toEqual([...BAD_ROWS]);
      const bound = 1 + 2 * BAD_ROWS.size * Math.ceil(Math.log2(1_000));
      console.log(
        `no index, ${batchFailure}: ${stats.writeCalls} write calls (bound ${bound}), ${stats.reconcileReads} reconcile reads`,
      );
      expect(stats.writeCalls).toBeLessThanOrEqual(bound);
      // a record seen absent is not looked up again unless a later call of it goes unanswered
      expect(stats.reconcileReads).toBeLessThanOrEqual(1_000 + bound);
      const created = sandbox.store.users().filter((user) => user.username?.startsWith(prefix));
      expect(created).toHaveLength(997);
    },
  );
});

describe('a server that answers 500 for a bad record (no errorcode, no index)', () => {
  it.each(['atomic', 'partial'] as const)(
    '%s: 198 of 200 succeeded, the 2 bad ones end unprocessed with the 500, nothing twice',
    async (batchFailure) => {
      sandbox.sandbox.setFaults({ batchFailure });
      const prefix = `s500.${batchFailure}.`;
      const bad = new Set([41, 170]);
      const records: StagedRecord[] = Array.from({ length: 200 }, (_, index) => {
        const row = index + 1;
        const username = `${prefix}${row}`;
        const record = bad.has(row) ? { username, groups: [987_654] } : { username };
        return { row, input: { username }, record };
      });
      // the server's refusal comes back as a bare 500: porter cannot tell what it applied
      const client = changingRefusals((error) =>
        error.status !== 400
          ? undefined
          : new AdminHttpError('internal server error', {
              method: error.method,
              path: error.path,
              status: 500,
            }),
      );
      const lookup = new RecordLookup({ client, retry });
      const plan = await planBatch(records, {
        resource: 'users',
        mode: 'create',
        allowAdmin: false,
        lookup,
      });
      const { results } = await executeOps(plan.ops, { client, resource: 'users', lookup, retry });
      expect(results).toHaveLength(200);
      const unprocessed = results.filter((result) => result.status === 'unprocessed');
      expect(unprocessed.map((result) => result.row).sort((a, b) => a - b)).toEqual([...bad]);
      for (const result of unprocessed) expect(result.error).toMatch(/500/);
      expect(results.filter((result) => result.status === 'succeeded')).toHaveLength(198);
      const created = sandbox.store.users().filter((user) => user.username?.startsWith(prefix));
      expect(created).toHaveLength(198);
    },
  );
});

describe('a 403 refusal', () => {
  /** A client whose writes are refused with 403 whenever `refuse` says so for a record of the call. */
  function refusing(refuse: (record: { username?: string }) => boolean): typeof sandbox.client {
    return aroundWrites(async (write, ...args) => {
      const records = args[2] as { username?: string }[];
      if (records.some(refuse)) {
        throw new AdminHttpError('forbidden', {
          method: args[1],
          path: '/userManager',
          status: 403,
          errorcode: 'FORBIDDEN',
        });
      }
      return write(...args);
    });
  }

  async function run(prefix: string, client: typeof sandbox.client) {
    const lookup = new RecordLookup({ client, retry });
    const plan = await planBatch(users(prefix, 100), {
      resource: 'users',
      mode: 'create',
      allowAdmin: false,
      lookup,
    });
    return executeOps(plan.ops, { client, resource: 'users', lookup, retry });
  }

  it('of every write (read-only credentials) costs 3 calls, not 2 per record: 2 failed, 98 unprocessed', async () => {
    const { results, stats } = await run(
      'ro.',
      refusing(() => true),
    );
    expect(stats.writeCalls).toBe(3);
    expect(results.filter((result) => result.status === 'failed')).toHaveLength(2);
    const unprocessed = results.filter((result) => result.status === 'unprocessed');
    expect(unprocessed).toHaveLength(98);
    expect(unprocessed[0]!.error).toMatch(
      /refused the whole call, and its first and last records alone, with 403/,
    );
  });

  it('of some records only is isolated like any refusal', async () => {
    const locked = (record: { username?: string }): boolean =>
      record.username === 'perm.1' ||
      record.username === 'perm.40' ||
      record.username === 'perm.77';
    const { results } = await run('perm.', refusing(locked));
    expect(results.filter((result) => result.status === 'succeeded')).toHaveLength(97);
    expect(
      results.filter((result) => result.status === 'failed').map((result) => result.key),
    ).toEqual(['perm.1', 'perm.40', 'perm.77']);
  });
});
