/**
 * `porter undo ID` through the real command: an import's updates (a lock among them), creates
 * and deletes are turned back as a new import with its own report; a record changed on the
 * server since is PORTER_PLAN_STALE and not written unless --even-changed (--force alone is refused:
 * it only ever overwrites an output file); --dry-run writes nothing.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportInfo, RecordResult } from '../../src/model/import.js';
import { UndoLog } from '../../src/results/undo-log.js';
import { runPorter, type CliResult } from '../helpers/porter-cli.js';
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

/** Runs `porter undo` with --wait and gives back the command's result and the undo's import. */
async function undo(
  id: string,
  ...flags: string[]
): Promise<{ cli: CliResult; info: ImportInfo; results: RecordResult[] }> {
  const cli = await runPorter(['undo', id, '--wait', '--yes', ...flags], env);
  const undoId = cli.stdout.trim();
  expect(undoId, cli.stderr).toMatch(/^\S+$/);
  const info = (await pipeline.context.store.get(undoId))!;
  return { cli, info, results: await pipeline.results(undoId) };
}

beforeAll(async () => {
  pipeline = await startPipeline();
  env = pipeline.childEnv();
  const client = pipeline.context.createAdminClient();
  await client.postGroups([{ name: 'Undo Sales' }]);
  const sales = pipeline.sandbox.store.groupByName('Undo Sales')!.id!;
  await client.postUsers([
    { username: 'undo.ada', email: 'ada@old', city: 'Paris' },
    { username: 'undo.lock', email: 'lock@x', status: 'Active' },
    { username: 'undo.same', email: 'same@x' },
    { username: 'undo.gone', email: 'gone@x', firstName: 'Gone', groups: [sales] },
    { username: 'undo.s1', email: 's1@old' },
    { username: 'undo.s2', email: 's2@old' },
  ]);
  await client.close();
});
afterAll(async () => {
  await pipeline?.close();
});

describe('porter undo', () => {
  let upsertId: string;

  it('keeps the values replaced by each changed record, and only for those', async () => {
    const { info } = await pipeline.run(
      csv(
        ['username', 'email', 'status'],
        [
          ['undo.ada', 'ada@new', ''],
          ['undo.lock', '', 'Locked'],
          ['undo.same', 'same@x', ''],
          ['undo.new', 'new@x', ''],
        ],
      ),
      { resource: 'users', mode: 'upsert' },
    );
    upsertId = info.id;
    expect(info.state).toBe('completed');
    expect(info.actions).toEqual({ update: 2, create: 1, unchanged: 1 });
    expect(pipeline.sandbox.store.userByName('undo.lock')).toMatchObject({ status: 'Locked' });
    const log = new UndoLog(
      pipeline.context.redis,
      pipeline.context.env.PORTER_PREFIX,
      pipeline.context.store.ttlSeconds,
    );
    // the unchanged record keeps nothing; the kept entries expire with the import
    const kept: number[] = [];
    for await (const entry of log.entries(upsertId)) kept.push(entry.row);
    expect(kept).toHaveLength(3);
    expect(kept).toEqual([...kept].sort((a, b) => a - b));
    expect(await pipeline.context.redis.ttl(log.key(upsertId))).toBeGreaterThan(0);
  });

  it('--dry-run plans the undo and writes nothing', async () => {
    const before = writes();
    const { cli, info, results } = await undo(upsertId, '--dry-run');
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stderr).toMatch(/planned: 2 update, 1 delete \(apply with: porter apply \S+\)/);
    expect(writes()).toBe(before);
    expect(info).toMatchObject({ undoOf: upsertId, counts: { planned: 3 } });
    expect(results.map((r) => [r.key, r.status, r.action])).toEqual([
      ['undo.ada', 'planned', 'update'],
      ['undo.lock', 'planned', 'update'],
      ['undo.new', 'planned', 'delete'],
    ]);
    expect(results[0]!.changes).toEqual([{ field: 'email', from: 'ada@new', to: 'ada@old' }]);
    expect(pipeline.sandbox.store.userByName('undo.new')).toBeDefined();
    expect(pipeline.sandbox.store.userByName('undo.lock')).toMatchObject({ status: 'Locked' });
  });

  it('turns back an update, a lock and a create, as a new import linked to the first', async () => {
    const adaId = pipeline.sandbox.store.userByName('undo.ada')!.userId;
    const newId = pipeline.sandbox.store.userByName('undo.new')!.userId;
    const { cli, info, results } = await undo(upsertId);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stderr).toContain('3 succeeded');
    expect(info).toMatchObject({ undoOf: upsertId, state: 'completed' });
    expect(results.map((r) => [r.key, r.status, r.action])).toEqual([
      ['undo.ada', 'succeeded', 'update'],
      ['undo.lock', 'succeeded', 'update'],
      ['undo.new', 'succeeded', 'delete'],
    ]);
    expect(results[0]).toMatchObject({ id: adaId, input: { previousId: String(adaId) } });
    expect(results[2]).toMatchObject({ id: newId, input: { undoes: 'create' } });
    expect(pipeline.sandbox.store.userByName('undo.ada')).toMatchObject({
      email: 'ada@old',
      city: 'Paris',
    });
    expect(pipeline.sandbox.store.userByName('undo.lock')).toMatchObject({ status: 'Active' });
    expect(pipeline.sandbox.store.userByName('undo.new')).toBeUndefined();

    // an undo is an import: undoing it brings the changes back, the created user under a new id
    const again = await undo(info.id);
    expect(again.cli.code, again.cli.stderr).toBe(0);
    expect(again.results.map((r) => [r.key, r.status, r.action])).toEqual([
      ['undo.ada', 'succeeded', 'update'],
      ['undo.lock', 'succeeded', 'update'],
      ['undo.new', 'succeeded', 'create'],
    ]);
    expect(pipeline.sandbox.store.userByName('undo.ada')).toMatchObject({ email: 'ada@new' });
    expect(pipeline.sandbox.store.userByName('undo.lock')).toMatchObject({ status: 'Locked' });
    const recreated = pipeline.sandbox.store.userByName('undo.new')!;
    expect(recreated).toMatchObject({ email: 'new@x' });
    expect(recreated.userId).not.toBe(newId);
    expect(again.results[2]).toMatchObject({
      id: recreated.userId,
      input: { previousId: String(newId) },
    });
  });

  it('re-creates a deleted record with its fields; the report maps the old id to the new', async () => {
    const gone = pipeline.sandbox.store.userByName('undo.gone')!;
    const { info: deleted } = await pipeline.run(csv(['username'], [['undo.gone']]), {
      resource: 'users',
      mode: 'delete',
    });
    expect(deleted.actions).toEqual({ delete: 1 });
    expect(pipeline.sandbox.store.userByName('undo.gone')).toBeUndefined();

    const { cli, results } = await undo(deleted.id);
    expect(cli.code, cli.stderr).toBe(0);
    const back = pipeline.sandbox.store.userByName('undo.gone')!;
    expect(back).toMatchObject({ email: 'gone@x', firstName: 'Gone', groups: gone.groups });
    expect(back.userId).not.toBe(gone.userId);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      key: 'undo.gone',
      action: 'create',
      status: 'succeeded',
      id: back.userId,
      input: { previousId: String(gone.userId), undoes: 'delete' },
    });
    const report = await runPorter(['report', cli.stdout.trim()], env);
    const [cells] = parse(report.stdout, { columns: true }) as Record<string, string>[];
    expect(cells).toMatchObject({
      id: String(back.userId),
      previousId: String(gone.userId),
      undoes: 'delete',
    });
  });

  it('a record changed on the server since is PORTER_PLAN_STALE and not written; --even-changed writes it', async () => {
    const { info: changed } = await pipeline.run(
      csv(
        ['username', 'email'],
        [
          ['undo.s1', 's1@new'],
          ['undo.s2', 's2@new'],
        ],
      ),
      { resource: 'users', mode: 'update' },
    );
    expect(changed.actions).toEqual({ update: 2 });
    // someone else edits undo.s2's email after the import
    const client = pipeline.context.createAdminClient();
    await client.putUsers([
      { ...pipeline.sandbox.store.userByName('undo.s2')!, email: 's2@other' },
    ]);
    await client.close();

    const before = writes();
    const stale = await undo(changed.id);
    expect(stale.cli.code).toBe(2);
    expect(stale.results.map((r) => [r.key, r.status, r.errorCode])).toEqual([
      ['undo.s1', 'succeeded', undefined],
      ['undo.s2', 'failed', 'PORTER_PLAN_STALE'],
    ]);
    expect(writes()).toBe(before + 1);
    expect(pipeline.sandbox.store.userByName('undo.s1')).toMatchObject({ email: 's1@old' });
    expect(pipeline.sandbox.store.userByName('undo.s2')).toMatchObject({ email: 's2@other' });

    // --force once meant --even-changed: refused before anything is stored, naming the new flag
    const refused = await runPorter(['undo', changed.id, '--force'], env);
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain('--even-changed');
    expect(refused.stdout).toBe('');

    const forced = await undo(changed.id, '--even-changed');
    expect(forced.cli.code, forced.cli.stderr).toBe(0);
    expect(forced.info.options.force).toBe(true);
    // undo.s1 holds its old value already: unchanged, no write
    expect(forced.results.map((r) => [r.key, r.status, r.action])).toEqual([
      ['undo.s1', 'succeeded', 'unchanged'],
      ['undo.s2', 'succeeded', 'update'],
    ]);
    expect(pipeline.sandbox.store.userByName('undo.s2')).toMatchObject({ email: 's2@old' });
  });

  it('refuses an import that has not ended, and a dry run', async () => {
    const running = await pipeline.context.store.create({
      options: {
        resource: 'users',
        mode: 'upsert',
        batchSize: 100,
        listSeparator: '|',
        emptyAsClear: false,
        allowAdmin: false,
      },
    });
    const refused = await runPorter(['undo', running.id], env);
    expect(refused.code).toBe(65);
    expect(refused.stderr).toContain(`import ${running.id} is still receiving`);
    expect(refused.stderr).toContain('PORTER_CONFLICT');

    const { info: plan } = await pipeline.run(csv(['username'], [['undo.plan']]), {
      resource: 'users',
      mode: 'create',
      dryRun: true,
    });
    const dry = await runPorter(['undo', plan.id], env);
    expect(dry.code).toBe(65);
    expect(dry.stderr).toContain('dry run');
  });
});
