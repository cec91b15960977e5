/**
 * What SCIM changed is kept as imports (src/app/scim-journal.ts), over real HTTP against the
 * sandbox with real workers: an identity provider's creates, updates, deactivations and deletes
 * of an hour are the records of one import with source `scim` started by its token, listed by
 * `GET /v1/imports?source=scim` and `porter list --source scim`, and `POST
 * /v1/imports/{id}/undo` turns every one of them back.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { buildApiApp } from '../../src/http/build-app.js';
import type { ImportInfo } from '../../src/model/import.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { scimRequest, type ScimAnswer } from '../helpers/scim-request.js';

const API_TOKEN = 'journal-scim-api-token-0123456789';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let entra: string;

const scim = (method: string, path: string, body?: unknown): Promise<ScimAnswer> =>
  scimRequest(`${baseUrl}/scim/v2/default${path}`, entra, method, body);

async function api(method: string, path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_TOKEN}` },
  });
  return { status: response.status, body: await response.json() };
}

function damUser(name: string): Record<string, unknown> | undefined {
  return [...pipeline.sandbox.store.allUsers()].find((user) => user.username === name) as
    Record<string, unknown> | undefined;
}

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const made = { at: new Date().toISOString(), actionId: 'journal', who: { name: 'test' } };
  entra = (
    await securityOf(pipeline.context).tokens.create(
      { name: 'entra-prod', role: 'operator', targets: ['default'], scimOnly: true },
      made,
    )
  ).token;
  const admin = pipeline.context.createAdminClient();
  await admin.postUsers([
    { username: 'bob.b', email: 'bob@example.com', position: '', dept: 'Sales' },
    { username: 'cy.c', email: 'cy@example.com' },
    { username: 'di.d', email: 'di@example.com', dept: 'Legal' },
  ]);
  await admin.close();
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

describe("SCIM's changes as imports", () => {
  let journal: ImportInfo;

  it('an hour of changes by one token is one import with source scim, its records each change', async () => {
    const ann = await scim('POST', '/Users', { userName: 'ann.a' });
    expect(ann.status).toBe(201);
    const id = (name: string) => String(damUser(name)!.userId);
    // a user created and changed within the hour: its undo still deletes it
    const titled = await scim('PATCH', `/Users/${ann.body.id}`, {
      Operations: [{ op: 'replace', path: 'name.familyName', value: 'Able' }],
    });
    expect([200, 204], titled.text).toContain(titled.status);
    const department = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department';
    const patched = await scim('PATCH', `/Users/${id('bob.b')}`, {
      Operations: [{ op: 'replace', path: department, value: 'Marketing' }],
    });
    expect([200, 204], patched.text).toContain(patched.status);
    const locked = await scim('PATCH', `/Users/${id('cy.c')}`, {
      Operations: [{ op: 'replace', path: 'active', value: false }],
    });
    expect([200, 204], locked.text).toContain(locked.status);
    expect((await scim('DELETE', `/Users/${id('di.d')}`)).status).toBe(204);
    expect(damUser('bob.b')!.dept).toBe('Marketing');
    expect(damUser('cy.c')!.status).toBe('Locked');
    expect(damUser('di.d')).toBeUndefined();

    const listed = await api('GET', '/v1/imports?source=scim');
    expect(listed.status).toBe(200);
    const imports = listed.body as ImportInfo[];
    expect(imports).toHaveLength(1);
    journal = imports[0]!;
    expect(journal).toMatchObject({ source: 'scim', startedBy: 'token:entra-prod' });
    const results = await pipeline.results(journal.id);
    expect(results.map((result) => [result.key, result.action, result.status])).toEqual([
      ['ann.a', 'create', 'succeeded'],
      ['ann.a', 'update', 'succeeded'],
      ['bob.b', 'update', 'succeeded'],
      ['cy.c', 'lock', 'succeeded'],
      ['di.d', 'delete', 'succeeded'],
    ]);
    // other imports are not listed with it
    await pipeline.run('username\nfile.user\n', { resource: 'users', mode: 'create' });
    expect(((await api('GET', '/v1/imports?source=scim')).body as ImportInfo[]).length).toBe(1);
  });

  it('porter list --source scim lists it, with the token that sent the changes', async () => {
    const cli = await runPorter(['list', '--source', 'scim'], pipeline.childEnv());
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(journal.id);
    expect(cli.stdout).not.toMatch(/upload\.csv/);
    expect(cli.stdout.split('\n').find((line) => line.includes(journal.id))).toContain(
      'token:entra-prod',
    );
    const elsewhere = await runPorter(
      ['list', '--source', 'scim', '--target', 'other'],
      pipeline.childEnv(),
    );
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(elsewhere.stdout).not.toContain(journal.id);
  });

  it('an undo of it turns each change back', async () => {
    const undo = await api('POST', `/v1/imports/${journal.id}/undo`);
    expect(undo.status, JSON.stringify(undo.body)).toBe(202);
    const undoId = (undo.body as ImportInfo).id;
    const ended = await pipeline.waitFinal(undoId);
    expect(ended.state, JSON.stringify(await pipeline.results(undoId))).toBe('completed');
    expect(damUser('ann.a')).toBeUndefined();
    expect(damUser('bob.b')!.dept).toBe('Sales');
    expect(damUser('cy.c')!.status).toBe('Active');
    expect(damUser('di.d')).toMatchObject({ email: 'di@example.com', dept: 'Legal' });
    // the journal ended when its undo asked for it: what it held is what was undone
    expect((await pipeline.context.store.get(journal.id))!.state).toBe('completed');
  });

  it('a change after the undo opens a new journal', async () => {
    expect((await scim('POST', '/Users', { userName: 'eve.e' })).status).toBe(201);
    const imports = (await api('GET', '/v1/imports?source=scim')).body as ImportInfo[];
    expect(imports.map((info) => info.id)).toContain(journal.id);
    expect(imports).toHaveLength(2);
  });
});

describe("SCIM's group changes as an import of groups", () => {
  function damGroup(name: string): { id: number; name: string } | undefined {
    return [...pipeline.sandbox.store.allGroups()].find((group) => group.name === name);
  }
  const members = (name: string): string[] =>
    pipeline.sandbox.store
      .usersOfGroup(damGroup(name)!.id)
      .map((userId) => String(pipeline.sandbox.store.getUser(userId)!.username))
      .sort();

  it('creates, member changes, renames and deletes are kept, and an undo turns them back', async () => {
    const admin = pipeline.context.createAdminClient();
    const [gone] = await admin.postGroups([{ name: 'Old Crew' }]);
    await admin.close();
    const user = (name: string) => ({ value: String(damUser(name)!.userId) });
    const created = await scim('POST', '/Groups', {
      displayName: 'Night Shift',
      members: [user('bob.b')],
    });
    expect(created.status, created.text).toBe(201);
    const patched = await scim('PATCH', `/Groups/${created.body.id}`, {
      Operations: [
        { op: 'add', path: 'members', value: [user('cy.c')] },
        { op: 'replace', path: 'displayName', value: 'Late Shift' },
      ],
    });
    expect([200, 204], patched.text).toContain(patched.status);
    expect((await scim('DELETE', `/Groups/${gone!.id}`)).status).toBe(204);
    expect(members('Late Shift')).toEqual(['bob.b', 'cy.c']);
    expect(damGroup('Old Crew')).toBeUndefined();

    const imports = (await api('GET', '/v1/imports?source=scim')).body as ImportInfo[];
    const groups = imports.filter((info) => info.options.resource === 'groups');
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ source: 'scim', startedBy: 'token:entra-prod' });
    const results = await pipeline.results(groups[0]!.id);
    expect(results.map((result) => [result.key, result.action, result.input])).toEqual([
      [
        'Night Shift',
        'create',
        { groupId: created.body.id, displayName: 'Night Shift', change: 'create' },
      ],
      [
        'Late Shift',
        'update',
        { groupId: created.body.id, displayName: 'Late Shift', change: 'update' },
      ],
      [
        'Old Crew',
        'delete',
        { groupId: String(gone!.id), displayName: 'Old Crew', change: 'delete' },
      ],
    ]);

    // the create undone deletes the group (its rename and new member go with it); the deleted
    // group is made again
    const undo = await api('POST', `/v1/imports/${groups[0]!.id}/undo`);
    expect(undo.status, JSON.stringify(undo.body)).toBe(202);
    const undoId = (undo.body as ImportInfo).id;
    const ended = await pipeline.waitFinal(undoId);
    expect(ended.state, JSON.stringify(await pipeline.results(undoId))).toBe('completed');
    expect(damGroup('Late Shift')).toBeUndefined();
    expect(damGroup('Night Shift')).toBeUndefined();
    expect(damGroup('Old Crew')).toBeDefined();
  });
});
