/**
 * POST /v1/imports/{id}/undo: the same undo as `porter undo`, with dryRun, force and wait as
 * query parameters or a JSON body; groups and ACLs as well as users.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import type { ImportInfo, RecordResult } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let app: FastifyInstance;
const TOKEN = 'undo-http-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };

function writes(): number {
  const { users, groups, acls } = pipeline.sandbox.store.stats.writes;
  return [users, groups, acls].reduce(
    (sum, byMethod) => sum + byMethod.PUT + byMethod.POST + byMethod.DELETE,
    0,
  );
}

async function undo(
  id: string,
  query = 'wait=true',
  body?: Record<string, unknown>,
): Promise<{ status: number; info: ImportInfo; results: RecordResult[] }> {
  const response = await app.inject({
    method: 'POST',
    url: `/v1/imports/${id}/undo?${query}`,
    headers: body ? { ...auth, 'content-type': 'application/json' } : auth,
    payload: body ? JSON.stringify(body) : undefined,
  });
  const info = response.json<ImportInfo>();
  expect(response.statusCode, response.body).toBeLessThan(300);
  // a wait that ends early answers 202: wait for the end here then
  const settled = info.settled ? info : await pipeline.waitFinal(info.id);
  return { status: response.statusCode, info: settled, results: await pipeline.results(info.id) };
}

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN, maxUploadBytes: 64 * 1024 });
  const client = pipeline.context.createAdminClient();
  await client.postUsers([
    { username: 'h.ada', email: 'ada@old', status: 'Active' },
    { username: 'h.bob', email: 'bob@old' },
    { username: 'h.member', email: 'member@x' },
  ]);
  const member = pipeline.sandbox.store.userByName('h.member')!.userId!;
  await client.postGroups([
    { name: 'H Crew', description: 'the crew', priority: 3, users: [member] },
    { name: 'H Owners' },
  ]);
  await client.close();
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

describe('POST /v1/imports/{id}/undo', () => {
  it('dryRun plans and writes nothing; wait=true answers 200 once the undo has ended', async () => {
    const { info: imported } = await pipeline.run(
      csv(
        ['username', 'email', 'status'],
        [
          ['h.ada', 'ada@new', 'Locked'],
          ['h.new', 'new@x', ''],
        ],
      ),
      { resource: 'users', mode: 'upsert' },
    );
    expect(imported.actions).toEqual({ update: 1, create: 1 });

    const before = writes();
    const plan = await undo(imported.id, 'wait=true&dryRun=true');
    expect(plan.status).toBe(200);
    expect(plan.info).toMatchObject({ undoOf: imported.id, counts: { planned: 2 } });
    expect(writes()).toBe(before);
    expect(pipeline.sandbox.store.userByName('h.ada')).toMatchObject({ status: 'Locked' });

    const done = await undo(imported.id);
    expect(done.status).toBe(200);
    expect(done.info).toMatchObject({ state: 'completed', undoOf: imported.id });
    expect(done.results.map((r) => [r.key, r.action, r.status])).toEqual([
      ['h.ada', 'update', 'succeeded'],
      ['h.new', 'delete', 'succeeded'],
    ]);
    expect(pipeline.sandbox.store.userByName('h.ada')).toMatchObject({
      email: 'ada@old',
      status: 'Active',
    });
    expect(pipeline.sandbox.store.userByName('h.new')).toBeUndefined();
  });

  it('a dry run of an undo can be applied like any plan', async () => {
    const { info: imported } = await pipeline.run(csv(['username', 'dept'], [['h.bob', 'Ops']]), {
      resource: 'users',
      mode: 'update',
    });
    const plan = await undo(imported.id, 'wait=true&dryRun=true');
    expect(plan.results[0]).toMatchObject({ action: 'update', status: 'planned' });
    expect(pipeline.sandbox.store.userByName('h.bob')).toMatchObject({ dept: 'Ops' });
    const response = await app.inject({
      method: 'POST',
      url: `/v1/imports/${plan.info.id}/apply`,
      headers: auth,
    });
    expect(response.statusCode).toBe(202);
    const applied = await pipeline.waitFinal(response.json<ImportInfo>().id);
    expect(applied).toMatchObject({
      state: 'completed',
      undoOf: imported.id,
      applyOf: plan.info.id,
    });
    expect(pipeline.sandbox.store.userByName('h.bob')!.dept ?? '').toBe('');
    // what an applied plan changed is kept too: undoing it puts the dept back
    const again = await undo(applied.id);
    expect(again.results[0]).toMatchObject({ action: 'update', status: 'succeeded' });
    expect(pipeline.sandbox.store.userByName('h.bob')).toMatchObject({ dept: 'Ops' });
  });

  it('without wait answers 202 at once with the new import', async () => {
    // read record by record rather than from a snapshot: the values replaced are kept the same
    const { info: imported } = await pipeline.run(csv(['username', 'city'], [['h.bob', 'Oslo']]), {
      resource: 'users',
      mode: 'update',
      lookup: 'each',
    });
    expect(imported.lookup?.mode).toBe('each');
    const response = await app.inject({
      method: 'POST',
      url: `/v1/imports/${imported.id}/undo`,
      headers: auth,
    });
    expect(response.statusCode).toBe(202);
    const created = response.json<ImportInfo & { links: Record<string, string> }>();
    expect(created).toMatchObject({ undoOf: imported.id });
    expect(created.links.self).toBe(`/v1/imports/${created.id}`);
    await pipeline.waitFinal(created.id);
    expect(pipeline.sandbox.store.userByName('h.bob')!.city ?? '').toBe('');
  });

  it('re-creates a deleted group with its members under a new id, and maps the ids', async () => {
    const crew = pipeline.sandbox.store.groupByName('H Crew')!;
    const member = pipeline.sandbox.store.userByName('h.member')!.userId!;
    const { info: deleted } = await pipeline.run(csv(['name'], [['H Crew']]), {
      resource: 'groups',
      mode: 'delete',
    });
    expect(deleted.actions).toEqual({ delete: 1 });
    expect(pipeline.sandbox.store.groupByName('H Crew')).toBeUndefined();

    const { results } = await undo(deleted.id);
    const back = pipeline.sandbox.store.groupByName('H Crew')!;
    expect(back).toMatchObject({ description: 'the crew', priority: 3, users: [member] });
    expect(back.id).not.toBe(crew.id);
    expect(results[0]).toMatchObject({
      action: 'create',
      status: 'succeeded',
      id: back.id,
      input: { name: 'H Crew', previousId: String(crew.id), undoes: 'delete' },
    });
  });

  it('a re-created user naming a group deleted since is refused by the server and not written', async () => {
    const client = pipeline.context.createAdminClient();
    const [temp] = await client.postGroups([{ name: 'H Temp' }]);
    await client.postUsers([{ username: 'h.temp', email: 'temp@x', groups: [temp!.id!] }]);
    const { info: deleted } = await pipeline.run(csv(['username'], [['h.temp']]), {
      resource: 'users',
      mode: 'delete',
    });
    await client.deleteGroups([{ id: temp!.id! }]);
    await client.close();

    const { info, results } = await undo(deleted.id);
    expect(info.state).toBe('completed_with_errors');
    expect(results[0]).toMatchObject({ action: 'create', status: 'failed' });
    expect(results[0]!.error).toContain(`group ${temp!.id} does not exist`);
    expect(pipeline.sandbox.store.userByName('h.temp')).toBeUndefined();
  });

  it('restores an ACL update; an ACL it created cannot be deleted: PORTER_UNDO_UNSUPPORTED', async () => {
    const owners = pipeline.sandbox.store.groupByName('H Owners')!.id!;
    const { results: made } = await pipeline.run(
      csv(['name', 'groupId', 'description'], [['Base', String(owners), 'first']]),
      { resource: 'acls', mode: 'create' },
    );
    const aclId = String(made[0]!.id);
    const { info: changed } = await pipeline.run(
      csv(
        ['name', 'groupId', 'description'],
        [
          ['Base', String(owners), 'second'],
          ['Extra', String(owners), 'new one'],
        ],
      ),
      { resource: 'acls', mode: 'upsert' },
    );
    expect(changed.actions).toEqual({ update: 1, create: 1 });

    const { info, results } = await undo(changed.id);
    expect(info.state).toBe('completed_with_errors');
    expect(results.map((r) => [r.action, r.status, r.errorCode])).toEqual([
      ['update', 'succeeded', undefined],
      ['delete', 'failed', 'PORTER_UNDO_UNSUPPORTED'],
    ]);
    expect(pipeline.sandbox.store.acl(aclId)).toMatchObject({ description: 'first' });
  });

  it('a record changed since is PORTER_PLAN_STALE and not written; force in the body writes it', async () => {
    const { info: changed } = await pipeline.run(csv(['username', 'email'], [['h.bob', 'b@1']]), {
      resource: 'users',
      mode: 'update',
    });
    const client = pipeline.context.createAdminClient();
    await client.putUsers([{ ...pipeline.sandbox.store.userByName('h.bob')!, email: 'b@2' }]);
    await client.close();

    const before = writes();
    const stale = await undo(changed.id);
    expect(stale.info.state).toBe('completed_with_errors');
    expect(stale.results[0]).toMatchObject({ status: 'failed', errorCode: 'PORTER_PLAN_STALE' });
    expect(writes()).toBe(before);
    expect(pipeline.sandbox.store.userByName('h.bob')).toMatchObject({ email: 'b@2' });

    const forced = await undo(changed.id, '', { force: true, wait: true });
    expect(forced.info).toMatchObject({ state: 'completed', options: { force: true } });
    expect(pipeline.sandbox.store.userByName('h.bob')).toMatchObject({ email: 'bob@old' });

    // an undo is not retried: it is undone again
    const retried = await app.inject({
      method: 'POST',
      url: `/v1/imports/${stale.info.id}/retry`,
      headers: auth,
    });
    expect(retried.statusCode).toBe(409);
    expect(retried.body).toContain(`porter undo ${changed.id} again`);
  });

  it('a record updated then deleted since is NOT_FOUND, even forced: nothing to restore', async () => {
    const client = pipeline.context.createAdminClient();
    await client.postUsers([{ username: 'h.vanish', email: 'v@old' }]);
    const { info: changed } = await pipeline.run(
      csv(['username', 'email'], [['h.vanish', 'v@new']]),
      {
        resource: 'users',
        mode: 'update',
      },
    );
    await client.deleteUsers([{ userId: pipeline.sandbox.store.userByName('h.vanish')!.userId }]);
    await client.close();
    const before = writes();
    const forced = await undo(changed.id, 'wait=true&force=true');
    expect(forced.results[0]).toMatchObject({ status: 'failed', errorCode: 'NOT_FOUND' });
    expect(writes()).toBe(before);
    expect(pipeline.sandbox.store.userByName('h.vanish')).toBeUndefined();
  });

  it('refuses an import still running (409), one that changed nothing, and an unknown id', async () => {
    const running = await pipeline.context.store.create({
      options: {
        resource: 'users',
        mode: 'update',
        batchSize: 100,
        listSeparator: '|',
        emptyAsClear: false,
        allowAdmin: false,
      },
    });
    const refused = await app.inject({
      method: 'POST',
      url: `/v1/imports/${running.id}/undo`,
      headers: auth,
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: { code: 'PORTER_CONFLICT' } });
    expect(refused.body).toContain('still receiving');

    const { info: nothing } = await pipeline.run(csv(['username'], [['h.nobody']]), {
      resource: 'users',
      mode: 'update',
    });
    const empty = await app.inject({
      method: 'POST',
      url: `/v1/imports/${nothing.id}/undo`,
      headers: auth,
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ error: { code: 'PORTER_INPUT_EMPTY' } });

    const anonymous = await app.inject({ method: 'POST', url: `/v1/imports/${nothing.id}/undo` });
    expect(anonymous.statusCode).toBe(401);

    const unknown = await app.inject({
      method: 'POST',
      url: '/v1/imports/01J0000000000000000000NONE/undo',
      headers: auth,
    });
    expect(unknown.statusCode).toBe(404);
  });
});
