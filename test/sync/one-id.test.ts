/**
 * One import, one id, from upload to undo: a held sync names the import that wrote its plan once
 * approved, and undo, retry, status and list follow it there; a held or cancelled sync's
 * planned records never read as done.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPorter } from '../helpers/porter-cli.js';
import { csv, type Pipeline } from '../helpers/pipeline.js';
import {
  approverEnv,
  seedUsers,
  startSyncPipeline,
  status,
  syncChildEnv,
  writes,
} from './sync-fixture.js';

let pipeline: Pipeline;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  pipeline = await startSyncPipeline();
  env = syncChildEnv(pipeline);
  dir = await mkdtemp(join(tmpdir(), 'porter-one-id-'));
  await seedUsers(pipeline, [
    { username: 'h.keep' },
    { username: 'h.one' },
    { username: 'h.two' },
    { username: 'h.three' },
    { username: 'k.keep' },
    { username: 'k.one' },
    { username: 'k.two' },
  ]);
});
afterAll(async () => {
  await pipeline?.close();
});

async function heldSync(prefix: string): Promise<string> {
  const path = join(dir, `${prefix}.csv`);
  await writeFile(path, csv(['username'], [[`${prefix}.keep`]]));
  const run = await runPorter(
    ['sync', path, '--resource', 'users', '--scope-match', `^${prefix}\\.`],
    env,
  );
  expect(run.code, run.stderr).toBe(3);
  return run.stdout.trim();
}

describe('a held sync, approved, then undone by its own id', () => {
  it('status, undo and list follow the held id to the import that wrote it', async () => {
    const held = await heldSync('h');
    // four eyes: another person approves what this one started, with an approver's token
    const approved = await runPorter(
      ['approve', held, '--yes', '--wait'],
      await approverEnv(pipeline, 'reviewer'),
    );
    expect(approved.code, approved.stderr).toBe(0);
    const writer = approved.stdout.trim();
    expect(status(pipeline, 'h.one')).toBe('Locked');

    // the held sync planned; another import wrote: its counts never read as done
    const shown = await runPorter(['status', held], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('4 planned');
    expect(shown.stdout).not.toContain('0 succeeded');
    // its own lines say planned; the writer's, indented under "written by", say done
    expect(shown.stdout).not.toMatch(/^done:/m);
    expect(shown.stdout).toContain('\n  done: 1 unchanged, 3 lock');
    expect(shown.stdout).toContain(`planned: 1 unchanged, 3 lock (written by import ${writer})`);
    expect(shown.stdout).toMatch(new RegExp(`approved at \\S+; written by import ${writer}`));
    expect(shown.stdout).toContain(`written by approved sync ${writer} completed`);
    const info = await pipeline.context.store.get(held);
    expect(info).toMatchObject({ writtenBy: writer, approvedAt: expect.any(String) });

    // undo with the id the operator has: the import that wrote is undone
    const undone = await runPorter(['undo', held, '--wait', '--yes'], env);
    expect(undone.code, undone.stderr).toBe(0);
    const undoId = undone.stdout.trim();
    expect(undone.stderr).toContain(`${held} was approved and written by import ${writer}`);
    expect(status(pipeline, 'h.one')).toBe('Active');
    expect(status(pipeline, 'h.three')).toBe('Active');
    expect(await pipeline.context.store.get(undoId)).toMatchObject({ undoOf: writer });

    const writerShown = await runPorter(['status', writer], env);
    expect(writerShown.stdout).toContain(`this import writes held ${held}`);
    expect(writerShown.stdout).toContain(`undone by import ${undoId}`);

    // list says what each import is, not plain upsert / sync
    const list = await runPorter(['list', '--limit', '5'], env);
    const line = (id: string): string => list.stdout.split('\n').find((row) => row.startsWith(id))!;
    expect(line(undoId)).toMatch(/upsert \(undo\)/);
    expect(line(undoId)).toContain(`undoes ${writer}`);
    expect(line(writer)).toMatch(/sync \(approved sync\)/);
    expect(line(writer)).toContain(`writes held ${held}; undone by ${undoId}`);
    expect(line(held)).toContain(`written by ${writer}`);
  });

  it('a cancelled held sync wrote nothing, and says so; undo and retry of it refuse', async () => {
    const held = await heldSync('k');
    const before = writes(pipeline);
    const cancelled = await runPorter(['cancel', held], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toContain('3 planned');
    expect(cancelled.stdout).not.toContain('succeeded');
    const shown = await runPorter(['status', held], env);
    expect(shown.stdout).toContain('planned: 1 unchanged, 2 lock (nothing written)');
    expect(shown.stdout).not.toContain('done:');

    const undo = await runPorter(['undo', held], env);
    expect(undo.code).toBe(65);
    expect(undo.stderr).toContain('nothing of it was written');
    expect(writes(pipeline)).toBe(before);
    expect(status(pipeline, 'k.one')).toBe('Active');
  });

  it('undo of a held sync not yet approved says to approve or cancel it', async () => {
    const path = join(dir, 'm.csv');
    await seedUsers(pipeline, [{ username: 'm.keep' }, { username: 'm.one' }]);
    await writeFile(path, csv(['username'], [['m.keep']]));
    const run = await runPorter(
      ['sync', path, '--resource', 'users', '--scope-match', '^m\\.'],
      env,
    );
    expect(run.code, run.stderr).toBe(3);
    const held = run.stdout.trim();
    const undo = await runPorter(['undo', held], env);
    expect(undo.stderr).toContain(`sync ${held} is held for approval: nothing of it was written`);
    expect(undo.stderr).toContain(`porter approve ${held}`);
  });
});
