/**
 * What a sync never touches (protected keys, administrators, porter's own account), how its
 * scope limits the records it may lock or delete, and its dry run.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  compileScopePattern,
  deletionThreshold,
  keyInScope,
  parseMaxDeletes,
} from '../../src/sync/sync-options.js';
import { csv, type Pipeline } from '../helpers/pipeline.js';
import {
  outcomes,
  runSync,
  seedGroups,
  seedUsers,
  SELF,
  startSyncPipeline,
  status,
  writes,
} from './sync-fixture.js';

let pipeline: Pipeline;
beforeEach(async () => {
  pipeline = await startSyncPipeline();
});
afterEach(async () => {
  await pipeline?.close();
});

describe('never touched', () => {
  beforeEach(async () => {
    await seedUsers(pipeline, [
      { username: SELF },
      { username: 'root', type: 'Global Administrator' },
      { username: 'grpadmin', type: 'Group Administrator' },
      { username: 'keeper' },
      { username: 'leaver' },
      { username: 'stayer', email: 'old@x' },
    ]);
  });

  it('protected keys, administrators and the account porter signs in as, whether in the file or not', async () => {
    const before = pipeline.sandbox.store.userByName('root');
    const text = csv(
      ['username', 'email'],
      [
        ['stayer', 'new@x'],
        // in the file with a change: still left alone
        ['root', 'root@new'],
        [SELF, 'self@new'],
      ],
    );
    const { info, results } = await runSync(pipeline, text, {
      missing: 'delete',
      maxDeletes: '100%',
      protect: ['keeper'],
    });
    expect(info.state).toBe('completed');
    expect(outcomes(results)).toEqual({
      stayer: 'succeeded update',
      root: 'skipped update',
      [SELF]: 'skipped update',
      'grpadmin*': 'skipped delete',
      'keeper*': 'skipped delete',
      'leaver*': 'succeeded delete',
    });
    const reason = (key: string): string => results.find((result) => result.key === key)!.error!;
    expect(reason('keeper')).toContain('protected');
    expect(reason('grpadmin')).toContain('administrator');
    expect(reason('root')).toContain('administrator');
    expect(reason(SELF)).toContain('ADMIN_USER');
    expect(pipeline.sandbox.store.userByName('root')).toEqual(before);
    expect(pipeline.sandbox.store.userByName(SELF)?.email).not.toBe('self@new');
    expect(pipeline.sandbox.store.userByName('keeper')).toBeDefined();
    expect(pipeline.sandbox.store.userByName('grpadmin')).toBeDefined();
    expect(pipeline.sandbox.store.userByName('leaver')).toBeUndefined();
    // left alone records do not count against the threshold
    expect(info.sync).toMatchObject({ deletes: 1, spared: 2 });
  });

  it('--allow-admin lets a sync lock administrators (never porter itself)', async () => {
    const text = csv(['username'], [['stayer']]);
    const { results } = await runSync(
      pipeline,
      text,
      { maxDeletes: '100%', protect: ['keeper'] },
      { allowAdmin: true },
    );
    expect(outcomes(results)).toMatchObject({
      'root*': 'succeeded lock',
      'grpadmin*': 'succeeded lock',
      [`${SELF}*`]: 'skipped lock',
      'keeper*': 'skipped lock',
    });
    expect(status(pipeline, 'root')).toBe('Locked');
    expect(status(pipeline, SELF)).toBe('Active');
  });

  it('a protect list with a key the server could not hold is refused before anything is stored', async () => {
    await expect(
      runSync(pipeline, csv(['username'], [['stayer']]), { protect: ['ok', ' padded'] }),
    ).rejects.toMatchObject({ code: 'PORTER_USAGE' });
  });
});

describe('scope', () => {
  it('--scope-group: only members of the group count as on the server', async () => {
    await seedGroups(pipeline, [{ name: 'Contractors' }, { name: 'Staff' }]);
    const contractors = pipeline.sandbox.store.groupByName('Contractors')!.id!;
    const staffGroup = pipeline.sandbox.store.groupByName('Staff')!.id!;
    await seedUsers(pipeline, [
      { username: 'c.one', groups: [contractors] },
      { username: 'c.two', groups: [contractors, staffGroup] },
      { username: 's.one', groups: [staffGroup] },
      { username: 'nobody' },
    ]);
    const { info, results } = await runSync(pipeline, csv(['username'], [['c.one']]), {
      scopeGroup: 'Contractors',
      maxDeletes: '100%',
    });
    expect(outcomes(results)).toEqual({
      'c.one': 'succeeded unchanged',
      'c.two*': 'succeeded lock',
    });
    expect(info.sync).toMatchObject({ inScope: 2, missing: 1 });
    expect(status(pipeline, 's.one')).toBe('Active');
    expect(status(pipeline, 'nobody')).toBe('Active');
  });

  it('a scope group that does not exist aborts the sync before anything is written', async () => {
    await seedUsers(pipeline, [{ username: 'x.one' }]);
    const before = writes(pipeline);
    const { info, results } = await runSync(
      pipeline,
      csv(['username', 'email'], [['x.new', 'n@x']]),
      { scopeGroup: 'NoSuchGroup' },
    );
    expect(info.state).toBe('failed');
    expect(info.reason).toContain('NoSuchGroup');
    expect(results.map((result) => result.errorCode)).toEqual(['PORTER_SYNC_ABORTED']);
    expect(writes(pipeline)).toBe(before);
  });

  it('--scope-match: only keys matching the pattern count as on the server', async () => {
    await seedUsers(pipeline, [
      { username: 'ext.ann' },
      { username: 'ext.bob' },
      { username: 'int.cid' },
      { username: `ext.${'x'.repeat(300)}` },
    ]);
    const { results } = await runSync(pipeline, csv(['username'], [['ext.ann'], ['int.new']]), {
      scopeMatch: '^ext\\.',
      maxDeletes: '100%',
    });
    // a key longer than the tested length is never in scope
    expect(outcomes(results)).toEqual({
      'ext.ann': 'succeeded unchanged',
      'int.new': 'succeeded create',
      'ext.bob*': 'succeeded lock',
    });
    expect(status(pipeline, 'int.cid')).toBe('Active');
  });

  it('patterns that may take exponential time, or are too long, are refused', () => {
    for (const pattern of ['(a+)+$', '(a|aa)*b', '(?:x*y?)+', '(a)\\1', 'a'.repeat(201), '(']) {
      expect(() => compileScopePattern(pattern), pattern).toThrow(/scope match/);
    }
    for (const pattern of ['^ext\\.', '^(?:ext|tmp)\\.[a-z]+$', '(ab)?c', '[(+]+']) {
      expect(() => compileScopePattern(pattern), pattern).not.toThrow();
    }
    expect(keyInScope(compileScopePattern('x'), 'x'.repeat(257))).toBe(false);
    expect(keyInScope(compileScopePattern('x'), 'x'.repeat(256))).toBe(true);
  });

  it('a wildcard given for a pattern is refused saying it is not one', () => {
    expect(() => compileScopePattern('*@example.com')).toThrow(
      /scope match: .*Nothing to repeat; it is a regular expression, not a wildcard: write \.\* for "anything"/,
    );
    expect(keyInScope(compileScopePattern('@example\\.com$'), 'ann@example.com')).toBe(true);
  });
});

describe('dry run', () => {
  it('plans field changes and the locks and deletes it would make; writes nothing', async () => {
    await seedUsers(pipeline, [{ username: 'd.ann', email: 'a@x' }, { username: 'd.bob' }]);
    const before = writes(pipeline);
    const { info, results } = await runSync(
      pipeline,
      csv(['username', 'email'], [['d.ann', 'b@x']]),
      { missing: 'delete' },
      { dryRun: true },
    );
    expect(info.state).toBe('completed');
    expect(outcomes(results)).toEqual({ 'd.ann': 'planned update', 'd.bob*': 'planned delete' });
    expect(results[0]!.changes).toEqual([{ field: 'email', from: 'a@x', to: 'b@x' }]);
    expect(writes(pipeline)).toBe(before);
    expect(pipeline.sandbox.store.userByName('d.bob')).toBeDefined();
  });
});

describe('a directory that cannot be read in bulk', () => {
  it('fails the sync with nothing written (an upsert would read record by record instead)', async () => {
    await seedUsers(pipeline, [{ username: 'r.one' }]);
    const before = writes(pipeline);
    pipeline.sandbox.setFaults({ failRate: 1 });
    const { info, results } = await runSync(
      pipeline,
      csv(['username', 'email'], [['r.one', 'new@x']]),
      { maxDeletes: '100%' },
    );
    pipeline.sandbox.setFaults({ failRate: 0 });
    expect(info.state).toBe('failed');
    expect(info.reason).toContain('could not be read in bulk');
    expect(results.map((result) => [result.status, result.errorCode])).toEqual([
      ['unprocessed', 'PORTER_SYNC_ABORTED'],
    ]);
    expect(writes(pipeline)).toBe(before);
  });
});

describe('the threshold, computed', () => {
  it('defaults to the smaller of 500 and 10% of the in-scope records; N or N% when given', () => {
    expect(deletionThreshold(undefined, 100_000)).toBe(500);
    expect(deletionThreshold(undefined, 4_009)).toBe(400);
    expect(deletionThreshold(undefined, 12)).toBe(1);
    expect(deletionThreshold(undefined, 9)).toBe(0);
    expect(deletionThreshold('25', 10)).toBe(25);
    expect(deletionThreshold('50%', 7)).toBe(3);
    expect(deletionThreshold('100%', 7)).toBe(7);
    for (const bad of ['', 'many', '-1', '5.5', '101%', '1e3']) {
      expect(() => parseMaxDeletes(bad), bad).toThrow(/max deletes/);
    }
  });
});
