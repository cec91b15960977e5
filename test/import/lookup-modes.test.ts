/**
 * Every lookup behaviour, the same cases in both modes: `each` (one GET per record) and
 * `snapshot` (the directory read in bulk into Redis before the first batch).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupMode } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

describe.each(['each', 'snapshot'] as const)('lookup %s', (lookup: LookupMode) => {
  let pipeline: Pipeline;
  const name = (base: string): string => `${lookup}.${base}`;
  beforeAll(async () => {
    pipeline = await startPipeline();
    const client = pipeline.context.createAdminClient();
    await client.postGroups([{ name: name('Sales') }, { name: name('Temps') }]);
    await client.postUsers([
      { username: name('present'), city: 'Paris', email: 'p@example.com' },
      { username: name('gone-soon') },
    ]);
    await client.close();
  });
  afterAll(async () => {
    await pipeline?.close();
  });

  it('records which lookup the import used; a snapshot its time and size', async () => {
    const { info } = await pipeline.run(csv(['username'], [[name('noted')]]), {
      resource: 'users',
      mode: 'upsert',
      lookup,
    });
    expect(info.lookup).toMatchObject({ mode: lookup, requested: lookup });
    if (lookup === 'snapshot') {
      expect(info.lookup?.records).toBeGreaterThanOrEqual(2);
      expect(info.lookup?.kept).toBe(0);
      expect(Date.parse(info.lookup!.takenAt!)).not.toBeNaN();
    }
  });

  it('snapshot reads the directory in one GET per resource; each reads once per record', async () => {
    const rows = Array.from({ length: 40 }, (_, index) => [name(`counted.${index}`)]);
    const before = pipeline.sandbox.store.stats.requests.GET;
    await pipeline.run(csv(['username'], rows), { resource: 'users', mode: 'upsert', lookup });
    const reads = pipeline.sandbox.store.stats.requests.GET - before;
    // snapshot: users and groups in bulk; each: one GET per record, and one bulk read of the
    // users to compare look-alikes with (an upsert may create)
    expect(reads).toBe(lookup === 'snapshot' ? 2 : 41);
  });

  it('create: a present record is ALREADY_EXISTS without a call, an absent one is created', async () => {
    const before = pipeline.sandbox.store.stats.writes.users.POST;
    const { results } = await pipeline.run(
      csv(['username'], [[name('present')], [name('new-hire')]]),
      { resource: 'users', mode: 'create', lookup },
    );
    expect(results.map((r) => [r.key, r.status, r.errorCode])).toEqual([
      [name('present'), 'failed', 'ALREADY_EXISTS'],
      [name('new-hire'), 'succeeded', undefined],
    ]);
    // the present one was decided without a call: one POST carried the new one alone
    expect(pipeline.sandbox.store.stats.writes.users.POST - before).toBe(1);
  });

  it('upsert merges into the present record and creates the absent one', async () => {
    const { results } = await pipeline.run(
      csv(
        ['username', 'dept'],
        [
          [name('present'), 'Research'],
          [name('upserted'), 'Ops'],
        ],
      ),
      { resource: 'users', mode: 'upsert', lookup },
    );
    expect(results.map((r) => [r.action, r.status])).toEqual([
      ['update', 'succeeded'],
      ['create', 'succeeded'],
    ]);
    const present = pipeline.sandbox.store.userByName(name('present'));
    expect(present).toMatchObject({ city: 'Paris', email: 'p@example.com', dept: 'Research' });
  });

  it('update of an absent record is NOT_FOUND; delete of an absent one is skipped', async () => {
    const update = await pipeline.run(csv(['username', 'city'], [[name('nobody'), 'Rome']]), {
      resource: 'users',
      mode: 'update',
      lookup,
    });
    expect(update.results[0]).toMatchObject({ status: 'failed', errorCode: 'NOT_FOUND' });
    const removal = await pipeline.run(csv(['username'], [[name('nobody')], [name('gone-soon')]]), {
      resource: 'users',
      mode: 'delete',
      lookup,
    });
    expect(removal.results.map((r) => [r.key, r.status])).toEqual([
      [name('nobody'), 'skipped'],
      [name('gone-soon'), 'succeeded'],
    ]);
    expect(pipeline.sandbox.store.userByName(name('gone-soon'))).toBeUndefined();
  });

  it('resolves group names to ids; an unknown name fails that record', async () => {
    const { results } = await pipeline.run(
      csv(
        ['username', 'groups'],
        [
          [name('member'), `${name('Sales')}|${name('Temps')}`],
          [name('lost'), name('NoSuchGroup')],
        ],
      ),
      { resource: 'users', mode: 'upsert', lookup },
    );
    expect(results.map((r) => [r.status, r.errorCode])).toEqual([
      ['succeeded', undefined],
      ['failed', 'PORTER_GROUP_UNRESOLVED'],
    ]);
    const sales = pipeline.sandbox.store.groupByName(name('Sales'))!;
    const member = pipeline.sandbox.store.userByName(name('member'));
    expect(member?.groups).toContain(sales.id);
  });

  it('a group created after the import began still resolves: a name the snapshot lacks is asked of the server', async () => {
    const submitted = await pipeline.submit(
      csv(['username', 'groups'], [[name('late'), name('Late')]]),
      {
        resource: 'users',
        mode: 'upsert',
        lookup,
      },
    );
    // created between the upload and the batch: a snapshot taken before it does not hold it
    const client = pipeline.context.createAdminClient();
    await client.postGroups([{ name: name('Late') }]).catch(() => {});
    await client.close();
    const info = await pipeline.waitFinal(submitted.id);
    const [result] = await pipeline.results(submitted.id);
    // either way the record ends with one result; when the group existed in time it is in it
    expect(info.done).toBe(1);
    if (result!.status === 'succeeded') {
      const late = pipeline.sandbox.store.groupByName(name('Late'))!;
      expect(pipeline.sandbox.store.userByName(name('late'))?.groups).toEqual([late.id]);
    } else {
      expect(result!.errorCode).toBe('PORTER_GROUP_UNRESOLVED');
    }
  });

  it('an unanswered create is looked up on the server before a resend: nothing is created twice', async () => {
    const refusedBefore = pipeline.sandbox.store.stats.refusals.ALREADY_EXISTS ?? 0;
    pipeline.sandbox.setFaults({ dropRate: 1 });
    const submitted = await pipeline.submit(
      csv(['username'], [[name('dropped.1')], [name('dropped.2')]]),
      { resource: 'users', mode: 'create', lookup },
    );
    // the first POST is applied but its answer dropped; the next ones are answered
    await waitForDrop(pipeline);
    pipeline.sandbox.setFaults({ dropRate: 0 });
    const info = await pipeline.waitFinal(submitted.id);
    const results = await pipeline.results(submitted.id);
    expect(info.state).toBe('completed');
    expect(results.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    for (const result of results) {
      expect(result.id).toBe(pipeline.sandbox.store.userByName(result.key!)?.userId);
    }
    // no create refused as existing: nothing was sent twice
    expect((pipeline.sandbox.store.stats.refusals.ALREADY_EXISTS ?? 0) - refusedBefore).toBe(0);
  });
});

async function waitForDrop(pipeline: Pipeline): Promise<void> {
  const { waitFor } = await import('../helpers/redis.js');
  await waitFor(async () => (pipeline.sandbox.store.stats.faults.dropped > 0 ? true : undefined), {
    what: 'a dropped answer',
  });
}
