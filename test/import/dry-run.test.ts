/**
 * Plans before writes: a dry run plans every record (action, field-level changes) and writes
 * nothing; `porter apply` writes the plan, refusing records changed on the server since.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyImport } from '../../src/app/imports.js';
import { buildApiApp } from '../../src/http/build-app.js';
import type { RecordResult } from '../../src/model/import.js';
import { runPorter } from '../helpers/porter-cli.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
const TOKEN = 'dry-run-token-0123456789abcdef';
let app: FastifyInstance;

function writes(): number {
  const { users, groups, acls } = pipeline.sandbox.store.stats.writes;
  return [users, groups, acls].reduce(
    (sum, byMethod) => sum + byMethod.PUT + byMethod.POST + byMethod.DELETE,
    0,
  );
}

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN, maxUploadBytes: 64 * 1024 });
  const client = pipeline.context.createAdminClient();
  await client.postGroups([{ name: 'Sales' }, { name: 'Temps' }]);
  const temps = pipeline.sandbox.store.groupByName('Temps')!.id!;
  await client.postUsers([
    { username: 'plan.ada', email: 'a@x', groups: [temps] },
    { username: 'plan.same', email: 'same@x' },
    { username: 'plan.bob', email: 'bob@x' },
  ]);
  await client.close();
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

const upload = csv(
  ['username', 'email', 'groups'],
  [
    ['plan.ada', 'b@x', 'Sales'],
    ['plan.new', 'new@x', ''],
    ['plan.same', 'same@x', ''],
    ['plan.bob', 'bob2@x', ''],
    ['plan.bad', 'b@x', 'NoSuchGroup'],
  ],
);

describe('dry run', () => {
  let planId: string;
  let planned: RecordResult[];

  it('plans every record and writes nothing', async () => {
    const before = writes();
    const { info, results } = await pipeline.run(upload, {
      resource: 'users',
      mode: 'upsert',
      dryRun: true,
    });
    planId = info.id;
    planned = results;
    expect(writes()).toBe(before);
    expect(info.state).toBe('completed_with_errors');
    expect(info.counts).toMatchObject({ planned: 4, failed: 1, succeeded: 0 });
    expect(info.actions).toEqual({ update: 2, create: 1, unchanged: 1 });
    expect(results.map((r) => [r.key, r.status, r.action])).toEqual([
      ['plan.ada', 'planned', 'update'],
      ['plan.new', 'planned', 'create'],
      ['plan.same', 'planned', 'unchanged'],
      ['plan.bob', 'planned', 'update'],
      ['plan.bad', 'failed', undefined],
    ]);
    const sales = pipeline.sandbox.store.groupByName('Sales')!.id!;
    const temps = pipeline.sandbox.store.groupByName('Temps')!.id!;
    expect(results[0]!.changes).toEqual([
      { field: 'email', from: 'a@x', to: 'b@x' },
      {
        field: 'groups',
        from: [temps],
        to: [sales],
        names: { [sales]: 'Sales', [temps]: 'Temps' },
      },
    ]);
    expect(results[4]).toMatchObject({ errorCode: 'PORTER_GROUP_UNRESOLVED' });
    expect(pipeline.sandbox.store.userByName('plan.new')).toBeUndefined();
  });

  it('the CSV report carries the planned action and the changes as readable text', async () => {
    const { writeReport } = await import('../../src/app/imports.js');
    const { PassThrough } = await import('node:stream');
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(chunk));
    await writeReport(pipeline.context, planId, out, { format: 'csv', status: ['planned'] });
    const text = Buffer.concat(chunks).toString('utf8');
    const header = text.split('\n')[0]!.split(',');
    expect(header).toContain('porter_action');
    expect(header).toContain('porter_changes');
    expect(text).toContain('email: a@x → b@x; groups: +Sales −Temps');
  });

  it('apply writes the plan; a record changed on the server since is PORTER_PLAN_STALE and not written', async () => {
    // someone edits plan.bob after the plan was made
    const client = pipeline.context.createAdminClient();
    const bob = pipeline.sandbox.store.userByName('plan.bob')!;
    await client.putUsers([{ ...bob, city: 'Elsewhere' }]);
    await client.close();

    const applied = await applyImport(pipeline.context, planId);
    expect(applied.applyOf).toBe(planId);
    const info = await pipeline.waitFinal(applied.id);
    const results = await pipeline.results(applied.id);
    expect(results.map((r) => [r.key, r.status, r.errorCode])).toEqual([
      ['plan.ada', 'succeeded', undefined],
      ['plan.new', 'succeeded', undefined],
      ['plan.same', 'succeeded', undefined],
      ['plan.bob', 'failed', 'PORTER_PLAN_STALE'],
      ['plan.bad', 'failed', 'PORTER_GROUP_UNRESOLVED'],
    ]);
    expect(info.state).toBe('completed_with_errors');
    expect(pipeline.sandbox.store.userByName('plan.ada')).toMatchObject({ email: 'b@x' });
    expect(pipeline.sandbox.store.userByName('plan.new')).toMatchObject({ email: 'new@x' });
    // the stale record was not written: its edit stays, its planned email did not land
    expect(pipeline.sandbox.store.userByName('plan.bob')).toMatchObject({
      email: 'bob@x',
      city: 'Elsewhere',
    });
    expect(planned).toHaveLength(5);
  });

  it('only a finished dry run can be applied', async () => {
    const { info } = await pipeline.run(csv(['username'], [['plan.real']]), {
      resource: 'users',
      mode: 'upsert',
    });
    await expect(applyImport(pipeline.context, info.id)).rejects.toMatchObject({
      code: 'PORTER_CONFLICT',
    });
  });

  it('apply refuses a new key that looks like one created on the server since the plan', async () => {
    const { info: plan } = await pipeline.run(
      csv(
        ['username', 'email'],
        [
          ['plan.kate', 'k@x'],
          ['plan.lee', 'l@x'],
        ],
      ),
      { resource: 'users', mode: 'create', dryRun: true },
    );
    // after the plan, someone else creates a look-alike of one of its new keys
    const client = pipeline.context.createAdminClient();
    await client.postUsers([{ username: 'Plan.Kate', email: 'other@x' }]);
    await client.close();

    const applied = await applyImport(pipeline.context, plan.id);
    await pipeline.waitFinal(applied.id);
    const results = await pipeline.results(applied.id);
    expect(results.map((r) => [r.key, r.status, r.errorCode])).toEqual([
      ['plan.kate', 'failed', 'PORTER_KEY_LOOKALIKE'],
      ['plan.lee', 'succeeded', undefined],
    ]);
    expect(pipeline.sandbox.store.userByName('plan.kate')).toBeUndefined();
    expect(pipeline.sandbox.store.userByName('plan.lee')).toMatchObject({ email: 'l@x' });
  });
});

describe('dry run over HTTP and the CLI', () => {
  it('HTTP: dryRun=true plans, POST /v1/imports/{id}/apply applies', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const before = writes();
    const created = await app.inject({
      method: 'POST',
      url: '/v1/imports?resource=users&mode=create&dryRun=true',
      headers: { ...auth, 'content-type': 'text/csv' },
      payload: csv(['username'], [['http.plan']]),
    });
    expect(created.statusCode).toBe(202);
    const { id } = created.json<{ id: string }>();
    const plan = await pipeline.waitFinal(id);
    expect(plan.counts.planned).toBe(1);
    expect(writes()).toBe(before);
    const applied = await app.inject({
      method: 'POST',
      url: `/v1/imports/${id}/apply`,
      headers: auth,
    });
    expect(applied.statusCode).toBe(202);
    const result = await pipeline.waitFinal(applied.json<{ id: string }>().id);
    expect(result).toMatchObject({ state: 'completed', counts: { succeeded: 1 } });
    expect(pipeline.sandbox.store.userByName('http.plan')).toBeDefined();
  });

  it('CLI: import --dry-run --wait prints the planned counts; porter apply ID --wait writes them', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'porter-plan-'));
    const file = join(dir, 'users.csv');
    await writeFile(file, csv(['username', 'email'], [['cli.plan', 'c@x']]));
    const env = pipeline.childEnv();
    const before = writes();
    const plan = await runPorter(
      ['import', file, '--resource', 'users', '--mode', 'upsert', '--dry-run', '--wait'],
      env,
    );
    expect(plan.code).toBe(0);
    expect(plan.stderr).toContain('1 planned');
    expect(plan.stderr).toMatch(/planned: 1 create \(apply with: porter apply \S+\)/);
    expect(writes()).toBe(before);
    const id = plan.stdout.trim();
    const status = await runPorter(['status', id], env);
    expect(status.stdout).toContain('planned: 1 create');
    const applied = await runPorter(['apply', id, '--wait', '--yes'], env);
    expect(applied.code).toBe(0);
    expect(applied.stderr).toContain('1 succeeded');
    expect(pipeline.sandbox.store.userByName('cli.plan')).toMatchObject({ email: 'c@x' });
  });
});
