/**
 * What a sync does with the server's records its file leaves out (lock, delete, ignore), how
 * it unlocks the users its file names, and how those records appear in its report.
 */
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeReport } from '../../src/app/imports.js';
import { csv, type Pipeline } from '../helpers/pipeline.js';
import {
  outcomes,
  runSync,
  seedGroups,
  seedUsers,
  startSyncPipeline,
  status,
  writes,
} from './sync-fixture.js';

let pipeline: Pipeline;
beforeEach(async () => {
  pipeline = await startSyncPipeline();
  await seedUsers(pipeline, [
    { username: 'ann', email: 'ann@x' },
    { username: 'bob', email: 'bob@x' },
    { username: 'cid', email: 'cid@x' },
    { username: 'dee', email: 'dee@x', status: 'Locked' },
    // the account porter signs in as, an ordinary user here
    { username: 'svc.porter' },
  ]);
});
afterEach(async () => {
  await pipeline?.close();
});

const file = csv(
  ['username', 'email'],
  [
    ['ann', 'ann@new'],
    ['bob', 'bob@x'],
    ['eve', 'eve@x'],
  ],
);

async function reportText(importId: string, format: 'csv' | 'json'): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  await writeReport(pipeline.context, importId, out, { format });
  return Buffer.concat(chunks).toString('utf8');
}

describe('records the file leaves out', () => {
  it('lock (the default for users): set to Locked, one result each, reported on rows of their own', async () => {
    const { info, results } = await runSync(pipeline, file, { maxDeletes: '100%' });
    expect(info.state).toBe('completed');
    expect(outcomes(results)).toEqual({
      ann: 'succeeded update',
      bob: 'succeeded unchanged',
      eve: 'succeeded create',
      'cid*': 'succeeded lock',
      // dee was locked already, and is not in the file: nothing to do
      'dee*': 'skipped lock',
      // porter's own account is on the server too, and never touched
      'svc.porter*': 'skipped lock',
    });
    expect(info.total).toBe(6);
    expect(new Set(results.map((result) => result.row)).size).toBe(6);
    expect(status(pipeline, 'cid')).toBe('Locked');
    expect(pipeline.sandbox.store.userByName('cid')).toBeDefined();
    expect(pipeline.sandbox.store.userByName('ann')?.email).toBe('ann@new');
    expect(info.sync).toMatchObject({ locks: 1, deletes: 0, missing: 3, spared: 2, held: false });
    const lock = results.find((result) => result.key === 'cid')!;
    expect(lock.changes).toEqual([{ field: 'status', from: 'Active', to: 'Locked' }]);

    const text = await reportText(info.id, 'csv');
    const lines = text.trim().split('\n');
    expect(lines[0]!.startsWith('row,line,sourceRow,key,action,status')).toBe(true);
    const cid = lines.find((line) => line.includes(',cid,'))!;
    // row empty, key set, action lock
    expect(cid.startsWith(',,,cid,lock,succeeded,')).toBe(true);
    const json = JSON.parse(await reportText(info.id, 'json')) as Record<string, unknown>[];
    expect(json.find((result) => result.key === 'cid')).toMatchObject({
      row: null,
      serverOnly: true,
      action: 'lock',
    });
    expect(json.find((result) => result.key === 'ann')).toMatchObject({ row: 1 });
  });

  it('delete: removes them; ignore: leaves them and reports nothing for them', async () => {
    const deleted = await runSync(pipeline, file, { missing: 'delete', maxDeletes: '10' });
    expect(deleted.info.state).toBe('completed');
    expect(outcomes(deleted.results)).toMatchObject({
      'cid*': 'succeeded delete',
      'dee*': 'succeeded delete',
    });
    expect(pipeline.sandbox.store.userByName('cid')).toBeUndefined();
    expect(pipeline.sandbox.store.userByName('dee')).toBeUndefined();
    expect(pipeline.sandbox.store.userByName('svc.porter')).toBeDefined();

    await seedUsers(pipeline, [{ username: 'fay' }]);
    const before = writes(pipeline);
    const ignored = await runSync(pipeline, file, { missing: 'ignore' });
    expect(ignored.info.state).toBe('completed');
    expect(ignored.results.map((result) => result.key)).toEqual(['ann', 'bob', 'eve']);
    expect(writes(pipeline)).toBe(before);
    expect(status(pipeline, 'fay')).toBe('Active');
  });

  it('groups: delete or ignore (the default); locking groups is refused', async () => {
    await seedGroups(pipeline, [{ name: 'Sales' }, { name: 'Temps' }]);
    const groups = csv(['name', 'description'], [['Sales', 'sales team']]);
    const ignored = await runSync(pipeline, groups, {}, { resource: 'groups' });
    expect(outcomes(ignored.results)).toEqual({ Sales: 'succeeded update' });
    expect(pipeline.sandbox.store.groupByName('Temps')).toBeDefined();

    const deleted = await runSync(
      pipeline,
      groups,
      { missing: 'delete', maxDeletes: '1' },
      { resource: 'groups' },
    );
    expect(outcomes(deleted.results)).toEqual({
      Sales: 'succeeded unchanged',
      'Temps*': 'succeeded delete',
    });
    expect(pipeline.sandbox.store.groupByName('Temps')).toBeUndefined();

    await expect(
      runSync(pipeline, groups, { missing: 'lock' }, { resource: 'groups' }),
    ).rejects.toMatchObject({ code: 'PORTER_USAGE' });
  });

  it('a record refused by validation still counts as in the file: its user is not locked', async () => {
    const text = csv(
      ['username', 'email', 'groups'],
      [
        ['ann', 'ann@x', ''],
        ['bob', 'bob@x', ''],
        ['cid', 'cid@x', 'NoSuchGroup'],
      ],
    );
    const { results } = await runSync(pipeline, text, { maxDeletes: '100%' });
    expect(outcomes(results)).toMatchObject({ cid: expect.stringMatching(/^failed/) as unknown });
    expect(Object.keys(outcomes(results))).not.toContain('cid*');
    expect(status(pipeline, 'cid')).toBe('Active');
  });
});

describe('users the file names', () => {
  it('a locked user in the file becomes Active again', async () => {
    const text = csv(['username'], [['ann'], ['bob'], ['cid'], ['dee']]);
    const { results } = await runSync(pipeline, text);
    expect(outcomes(results)).toMatchObject({ dee: 'succeeded update' });
    expect(results.find((result) => result.key === 'dee')!.changes).toEqual([
      { field: 'status', from: 'Locked', to: 'Active' },
    ]);
    expect(status(pipeline, 'dee')).toBe('Active');
  });

  it('unless the file carries a status column: its value wins, an empty cell leaves it', async () => {
    await seedUsers(pipeline, [{ username: 'gus', status: 'Locked' }]);
    const text = csv(
      ['username', 'status'],
      [
        ['ann', ''],
        ['bob', 'Locked'],
        ['cid', ''],
        ['dee', ''],
        ['gus', 'Active'],
      ],
    );
    const { results } = await runSync(pipeline, text);
    expect(outcomes(results)).toMatchObject({
      bob: 'succeeded update',
      dee: 'succeeded unchanged',
      gus: 'succeeded update',
    });
    expect(status(pipeline, 'bob')).toBe('Locked');
    expect(status(pipeline, 'dee')).toBe('Locked');
    expect(status(pipeline, 'gus')).toBe('Active');
  });
});

describe('keys: many, and look-alikes', () => {
  it('a directory larger than one chunk: every in-scope server key the file leaves out gets exactly one result', async () => {
    const big = await startSyncPipeline({ users: 2500 });
    try {
      const users = big.sandbox.store.users();
      const kept = String(users[1234]!.username);
      const before = writes(big);
      const { info, results } = await runSync(
        big,
        csv(['username'], [[kept]]),
        { maxDeletes: '100%' },
        { dryRun: true },
      );
      expect(info.state).toBe('completed');
      expect(info.sync).toMatchObject({ inScope: users.length, missing: users.length - 1 });
      expect(info.total).toBe(users.length);
      expect(results).toHaveLength(users.length);
      const serverOnly = results.filter((result) => result.serverOnly);
      expect(new Set(serverOnly.map((result) => result.key)).size).toBe(users.length - 1);
      expect(serverOnly.map((result) => result.key)).not.toContain(kept);
      // what the preparation counted is what the batches planned
      const locks = serverOnly.filter((result) => result.status === 'planned').length;
      expect(info.sync!.locks).toBe(locks);
      expect(info.sync!.spared).toBe(users.length - 1 - locks);
      expect(writes(big)).toBe(before);
    } finally {
      await big.close();
    }
  });

  it('a server key that looks like one of the file is left alone', async () => {
    const text = csv(['username'], [['Ann'], ['bob'], ['cid'], ['dee'], ['svc.porter']]);
    const { results } = await runSync(pipeline, text, { maxDeletes: '100%' });
    expect(outcomes(results)).toEqual({
      Ann: 'failed create',
      bob: 'succeeded unchanged',
      cid: 'succeeded unchanged',
      dee: 'succeeded update',
      'svc.porter': 'succeeded unchanged',
      'ann*': 'skipped lock',
    });
    expect(results.find((result) => result.key === 'ann')!.error).toContain('looks like it');
    expect(status(pipeline, 'ann')).toBe('Active');
  });
});
