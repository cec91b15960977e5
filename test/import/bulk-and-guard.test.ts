import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline({ workerOptions: { concurrency: 8 } });
});
afterAll(async () => {
  await pipeline?.close();
});

describe('a 10,000-row CSV with bad rows mixed in', () => {
  it('lands every good row and reports every bad row with row, field and reason', async () => {
    const rows: string[][] = [];
    const bad = new Map<number, string>();
    for (let row = 1; row <= 10_000; row++) {
      if (row % 997 === 0) {
        rows.push(['', `First${row}`, '']); // missing username
        bad.set(row, 'username');
      } else if (row % 1_009 === 0) {
        rows.push([`bulk.user${row}`, `First${row}`, '{not json']); // substitutionMap must be JSON
        bad.set(row, 'substitutionMap');
      } else {
        rows.push([`bulk.user${row}`, `First${row}`, '']);
      }
    }
    const text = csv(['username', 'firstName', 'substitutionMap'], rows);
    const { info, results } = await pipeline.run(text, { resource: 'users', mode: 'create' }, {});
    expect(results).toHaveLength(10_000);
    expect(info.total).toBe(10_000);
    expect(info.counts.failed).toBe(bad.size);
    expect(info.counts.succeeded).toBe(10_000 - bad.size);
    expect(info.state).toBe('completed_with_errors');
    results.forEach((result, index) => expect(result.row).toBe(index + 1));
    for (const [row, field] of bad) {
      const result = results[row - 1]!;
      expect(result).toMatchObject({ status: 'failed', errorCode: 'PORTER_ROW_INVALID', field });
      expect(result.error).toBeTruthy();
      expect(result.line).toBe(row + 1);
    }
    // every good row is in the sandbox, and no bad row was ever sent
    const usernames = new Set(pipeline.sandbox.store.users().map((user) => user.username));
    for (let row = 1; row <= 10_000; row++) {
      expect(usernames.has(`bulk.user${row}`)).toBe(!bad.has(row));
    }
  });
});

describe('group names resolve to ids', () => {
  it('a users file may name groups by name or id; an unknown name fails that record alone', async () => {
    const client = pipeline.context.createAdminClient();
    const [design, sales] = await client.postGroups([{ name: 'Design' }, { name: 'Sales' }]);
    const text = csv(
      ['username', 'groups'],
      [
        ['resolved.one', `Design|${sales!.id}`],
        ['resolved.two', 'No Such Group'],
      ],
    );
    const { results } = await pipeline.run(text, { resource: 'users', mode: 'upsert' });
    expect(results[0]).toMatchObject({ status: 'succeeded' });
    expect(results[1]).toMatchObject({
      status: 'failed',
      errorCode: 'PORTER_GROUP_UNRESOLVED',
      field: 'groups',
    });
    expect(results[1]!.error).toMatch(/No Such Group/);
    const [one] = await client.listUsers({ username: 'resolved.one' });
    expect(one?.groups?.sort()).toEqual([design!.id, sales!.id].sort());
    const [designAfter] = await client.listGroups({ name: 'Design' });
    expect(designAfter?.users).toEqual([one!.userId]);
    expect(await client.listUsers({ username: 'resolved.two' })).toEqual([]);
    await client.close();
  });
});

describe('privilege guard', () => {
  it('refuses creating an administrator or changing a user type unless allowAdmin', async () => {
    const client = pipeline.context.createAdminClient();
    await client.postUsers([{ username: 'plain.user' }]);
    const text = csv(
      ['username', 'type'],
      [
        ['new.admin', 'Global Administrator'],
        ['new.groupadmin', 'Group Administrator'],
        ['plain.user', 'Global Administrator'],
        ['new.general', 'General User'],
      ],
    );
    const refused = await pipeline.run(text, { resource: 'users', mode: 'upsert' });
    expect(refused.results.map((r) => [r.key, r.status, r.errorCode])).toEqual([
      ['new.admin', 'failed', 'PORTER_ADMIN_GUARD'],
      ['new.groupadmin', 'failed', 'PORTER_ADMIN_GUARD'],
      ['plain.user', 'failed', 'PORTER_ADMIN_GUARD'],
      ['new.general', 'succeeded', undefined],
    ]);
    expect(await client.listUsers({ username: 'new.admin' })).toEqual([]);
    // an allowlist: a look-alike or an unknown type is refused before it is sent
    const odd = await pipeline.run(
      csv(
        ['username', 'type'],
        [
          ['new.lookalike', 'Global Admіnistrator'], // Cyrillic і
          ['new.superuser', 'Superuser'],
          ['new.spaced', ' general  USER '],
        ],
      ),
      { resource: 'users', mode: 'create' },
    );
    expect(odd.results.map((r) => [r.key, r.status, r.errorCode, r.attempts])).toEqual([
      ['new.lookalike', 'failed', 'PORTER_ADMIN_GUARD', 0],
      ['new.superuser', 'failed', 'PORTER_ADMIN_GUARD', 0],
      // passes the guard; the sandbox then refuses the spelling it does not know
      ['new.spaced', 'failed', 'ADMIN_HTTP_ERROR', 1],
    ]);
    expect(odd.results[1]!.error).toMatch(/only "General User"/);
    expect((await client.listUsers({ username: 'plain.user' }))[0]?.type).toBe('General User');

    const allowed = await pipeline.run(text, {
      resource: 'users',
      mode: 'upsert',
      allowAdmin: true,
    });
    expect(allowed.results.every((r) => r.status === 'succeeded')).toBe(true);
    expect((await client.listUsers({ username: 'plain.user' }))[0]?.type).toBe(
      'Global Administrator',
    );

    const removal = await pipeline.run(csv(['username'], [['new.admin']]), {
      resource: 'users',
      mode: 'delete',
    });
    expect(removal.results[0]).toMatchObject({ status: 'failed', errorCode: 'PORTER_ADMIN_GUARD' });
    await client.close();
  });
});

describe('--max-failures', () => {
  it('stops an import whose failed records pass the limit: batches not yet sent become unprocessed', async () => {
    // rows 1-30 are bad (unknown group id); 10 rows a batch, one batch at a time
    const rows = Array.from({ length: 200 }, (_, index) => [
      `limit.user${index + 1}`,
      index < 30 ? '987654' : '',
    ]);
    const stopped = await startPipeline({ workerOptions: { concurrency: 1 } });
    try {
      const { info, results } = await stopped.run(csv(['username', 'groups'], rows), {
        resource: 'users',
        mode: 'create',
        batchSize: 10,
        maxFailures: '15',
      });
      expect(info.state).toBe('failed');
      expect(info.reason).toMatch(/more than --max-failures 15/);
      expect(results).toHaveLength(200);
      expect(info.counts.failed).toBeGreaterThan(15);
      expect(info.counts.unprocessed).toBeGreaterThan(0);
      expect(info.counts.failed + info.counts.succeeded + info.counts.unprocessed).toBe(200);
      const unprocessed = results.filter((result) => result.status === 'unprocessed');
      expect(unprocessed.every((result) => result.errorCode === 'PORTER_FAILURE_LIMIT')).toBe(true);
      // no unprocessed record was created
      const names = new Set(stopped.sandbox.store.users().map((user) => user.username));
      expect(
        unprocessed.some((result) => names.has(result.key ?? String(result.input.username))),
      ).toBe(false);
    } finally {
      await stopped.close();
    }
  });
});
