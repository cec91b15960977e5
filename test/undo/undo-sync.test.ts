/**
 * Undo of a sync: the users it locked are active again, the ones it deleted come back (under new
 * ids), and the ones it updated get their values back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { undoImport } from '../../src/app/undo.js';
import { csv, type Pipeline } from '../helpers/pipeline.js';
import { runSync, seedUsers, startSyncPipeline, status } from '../sync/sync-fixture.js';

let pipeline: Pipeline;

beforeAll(async () => {
  pipeline = await startSyncPipeline();
  await seedUsers(pipeline, [
    { username: 'sync.keep', email: 'keep@old', status: 'Active' },
    { username: 'sync.lockme', email: 'lock@x', status: 'Active' },
    { username: 'sync.dropme', email: 'drop@x', firstName: 'Drop', status: 'Active' },
  ]);
});
afterAll(async () => {
  await pipeline?.close();
});

async function undone(importId: string): Promise<void> {
  const undo = await undoImport(pipeline.context, importId);
  const info = await pipeline.waitFinal(undo.id);
  expect(info, JSON.stringify(await pipeline.results(undo.id))).toMatchObject({
    state: 'completed',
    undoOf: importId,
    options: { mode: 'upsert' },
  });
  expect(info.options).not.toHaveProperty('sync');
}

describe('undo of a sync', () => {
  it('unlocks the users a sync locked and restores the ones it updated', async () => {
    const { info } = await runSync(
      pipeline,
      csv(
        ['username', 'email'],
        [
          ['sync.keep', 'keep@new'],
          ['sync.dropme', 'drop@x'],
        ],
      ),
      { missing: 'lock', maxDeletes: '100%', protect: [] },
    );
    expect(info.state).toBe('completed');
    expect(status(pipeline, 'sync.lockme')).toBe('Locked');
    expect(pipeline.sandbox.store.userByName('sync.keep')).toMatchObject({ email: 'keep@new' });

    await undone(info.id);
    expect(status(pipeline, 'sync.lockme')).toBe('Active');
    expect(pipeline.sandbox.store.userByName('sync.keep')).toMatchObject({ email: 'keep@old' });
  });

  it('re-creates the users a sync deleted', async () => {
    const dropped = pipeline.sandbox.store.userByName('sync.dropme')!;
    const { info } = await runSync(pipeline, csv(['username'], [['sync.keep'], ['sync.lockme']]), {
      missing: 'delete',
      maxDeletes: '100%',
      protect: [],
    });
    expect(info.state).toBe('completed');
    expect(pipeline.sandbox.store.userByName('sync.dropme')).toBeUndefined();

    await undone(info.id);
    const back = pipeline.sandbox.store.userByName('sync.dropme')!;
    expect(back).toMatchObject({ email: 'drop@x', firstName: 'Drop', status: 'Active' });
    expect(back.userId).not.toBe(dropped.userId);
  });
});
