/**
 * `porter undo` asks before it writes, as `apply` and `approve` do, and every such question names
 * the target: off a terminal it undoes only with --yes (else exit 64, nothing changed on the
 * server); on a terminal (a pseudo-terminal through `script`) it shows the counts, deletes and
 * locks first, and the target by name and address, and only "y" goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPorter } from '../helpers/porter-cli.js';
import { runPorterOnTerminal } from '../helpers/porter-terminal.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let env: Record<string, string>;

function writes(): number {
  const { users, groups, acls } = pipeline.sandbox.store.stats.writes;
  return [users, groups, acls].reduce(
    (sum, byMethod) => sum + byMethod.PUT + byMethod.POST + byMethod.DELETE,
    0,
  );
}

/**
 * An ended import under `prefix` that created two users and unlocked a third: its undo deletes
 * two and locks one.
 */
async function changedImport(prefix: string): Promise<string> {
  const client = pipeline.context.createAdminClient();
  await client.postUsers([{ username: `${prefix}.locked`, email: 'l@x', status: 'Locked' }]);
  await client.close();
  const { info } = await pipeline.run(
    csv(
      ['username', 'email', 'status'],
      [
        [`${prefix}.new1`, 'n1@x', ''],
        [`${prefix}.new2`, 'n2@x', ''],
        [`${prefix}.locked`, '', 'Active'],
      ],
    ),
    { resource: 'users', mode: 'upsert' },
  );
  expect(info.actions).toEqual({ create: 2, update: 1 });
  return info.id;
}

/** Whether the import is as it was before any undo: no undo of it, its changes on the server. */
async function untouched(id: string, prefix: string): Promise<void> {
  expect((await pipeline.context.store.get(id))?.undoneBy).toBeUndefined();
  const list = await pipeline.context.store.list({ limit: 200 });
  expect(list.some((info) => info.undoOf === id)).toBe(false);
  expect(pipeline.sandbox.store.userByName(`${prefix}.new1`)).toBeDefined();
  expect(pipeline.sandbox.store.userByName(`${prefix}.locked`)).toMatchObject({ status: 'Active' });
}

let target: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  env = pipeline.childEnv();
  target = `target default (${pipeline.sandbox.url.replace(/\/$/, '')})`;
});
afterAll(async () => {
  await pipeline?.close();
});

describe('porter undo asks before it writes', () => {
  it('off a terminal, without --yes, it says what and where it would write, and is refused', async () => {
    const id = await changedImport('upa');
    const before = writes();
    const run = await runPorter(['undo', id, '--even-changed', '--wait'], env);
    expect(run.code, run.stderr).toBe(64);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`the undo of import ${id} writes: delete 2, lock 1`);
    expect(run.stderr).toContain(`  to ${target}`);
    expect(run.stderr).toContain('deletes and locks (3), first:');
    expect(run.stderr).toMatch(/ {2}delete upa\.new1 \(row 1\)/);
    expect(run.stderr).toMatch(/ {2}lock {3}upa\.locked \(row 3\)/);
    expect(run.stderr).toContain('there is no terminal to ask on; nothing was written');
    // the suggestion keeps what was asked for
    expect(run.stderr).toContain(`porter undo ${id} --even-changed --yes`);
    expect(writes()).toBe(before);
    await untouched(id, 'upa');
  });

  it('with --yes it undoes, having printed the same', async () => {
    const id = await changedImport('upb');
    const run = await runPorter(['undo', id, '--yes', '--wait'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`the undo of import ${id} writes: delete 2, lock 1`);
    expect(run.stderr).toContain(`  to ${target}`);
    const undoId = run.stdout.trim();
    expect(await pipeline.context.store.get(undoId)).toMatchObject({
      undoOf: id,
      state: 'completed',
    });
    expect(pipeline.sandbox.store.userByName('upb.new1')).toBeUndefined();
    expect(pipeline.sandbox.store.userByName('upb.locked')).toMatchObject({ status: 'Locked' });
  });

  it('--dry-run writes nothing and never asks', async () => {
    const id = await changedImport('upc');
    const before = writes();
    const run = await runPorter(['undo', id, '--dry-run', '--wait'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('writes:');
    expect(run.stderr).toMatch(/planned: 1 update, 2 delete/);
    expect(writes()).toBe(before);
    expect(pipeline.sandbox.store.userByName('upc.new1')).toBeDefined();
  });

  it('on a terminal it asks, naming the target; "n" changes nothing', async () => {
    const id = await changedImport('upd');
    const before = writes();
    const run = await runPorterOnTerminal(['undo', id, '--wait'], env, 'n');
    expect(run.asked, run.screen).toBe(true);
    expect(run.screen).toContain(
      `Undo import ${id}: write the undo to ${target}? It writes delete 2, lock 1 [y/N]`,
    );
    expect(run.screen).toContain('not confirmed; nothing was written');
    expect(run.code, run.screen).toBe(64);
    expect(writes()).toBe(before);
    await untouched(id, 'upd');
  });

  it('on a terminal, "y" undoes', async () => {
    const id = await changedImport('upe');
    const run = await runPorterOnTerminal(['undo', id, '--wait'], env, 'y');
    expect(run.asked, run.screen).toBe(true);
    expect(run.code, run.screen).toBe(0);
    expect(pipeline.sandbox.store.userByName('upe.new2')).toBeUndefined();
    expect(pipeline.sandbox.store.userByName('upe.locked')).toMatchObject({ status: 'Locked' });
  });
});

describe('porter apply asks on a terminal, naming the target', () => {
  it('shows where the plan would be written; "n" writes nothing', async () => {
    const { info: plan } = await pipeline.run(csv(['username', 'email'], [['upf.new', 'f@x']]), {
      resource: 'users',
      mode: 'create',
      dryRun: true,
    });
    const before = writes();
    const run = await runPorterOnTerminal(['apply', plan.id], env, 'n');
    expect(run.asked, run.screen).toBe(true);
    expect(run.screen).toContain(`dry run ${plan.id} writes: create 1`);
    expect(run.screen).toContain(
      `Apply dry run ${plan.id}: write its plan to ${target}? It writes create 1 [y/N]`,
    );
    expect(run.code, run.screen).toBe(64);
    expect(writes()).toBe(before);
    expect(pipeline.sandbox.store.userByName('upf.new')).toBeUndefined();
  });
});
