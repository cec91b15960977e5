/**
 * The deletion hold: a target takes `scim.maxDeletesPerHour` deletes and deactivations an hour
 * from SCIM; the rest are held in one plan and answered 503 with Retry-After. An approver (four
 * eyes) releases the plan or drops it; the provider's retries are answered from the result, and
 * a released change is written once. Protected users and admins are never removed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notifyDeliveries } from '../../src/app/notify.js';
import { onScimDeletesHeld, type DeletesHeldEvent } from '../../src/app/scim-hold.js';
import { securityOf } from '../../src/app/security.js';
import type { Role } from '../../src/auth/roles.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/wait.js';
import { scimRequest, type ScimAnswer } from '../helpers/scim-request.js';

let dir: string;
let sandbox: RunningSandbox;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let entra: string;
let ann: string;
const events: DeletesHeldEvent[] = [];
let unsubscribe: () => void;

async function makeToken(
  name: string,
  role: Role,
  extra: { targets?: string[]; scimOnly?: boolean } = {},
): Promise<string> {
  const made = { at: new Date().toISOString(), actionId: name, who: { name: 'test' } };
  return (await securityOf(pipeline.context).tokens.create({ name, role, ...extra }, made)).token;
}

const call = (method: string, path: string, token: string, body?: unknown): Promise<ScimAnswer> =>
  scimRequest(`${baseUrl}${path}`, token, method, body);

const scim = (method: string, path: string, body?: unknown) =>
  call(method, `/scim/v2/idp${path}`, entra, body);

const deactivate = (id: string) =>
  scim('PATCH', `/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
  });

async function createUser(userName: string): Promise<string> {
  const created = await scim('POST', '/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName,
    active: true,
  });
  expect(created.status).toBe(201);
  return String(created.body.id);
}

const status = (name: string) => sandbox.store.userByName(name)?.status;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-scim-hold-'));
  sandbox = await startSandbox({ port: 0 });
  const targetsFile = join(dir, 'targets.json');
  await writeFile(
    targetsFile,
    JSON.stringify({
      idp: { url: sandbox.url, scim: { maxDeletesPerHour: 2, protect: ['Keep.Me'] } },
    }),
  );
  // a channel told of held SCIM changes: one notice per held plan, however many changes it holds
  const channelsFile = join(dir, 'channels.json');
  await writeFile(
    channelsFile,
    JSON.stringify({
      ops: { kind: 'chat', url: 'http://127.0.0.1:9/hook', events: ['scim.deletes_held'] },
    }),
  );
  pipeline = await startPipeline({
    workers: false,
    env: { PORTER_TARGETS_FILE: targetsFile, PORTER_NOTIFY_FILE: channelsFile },
  });
  app = await buildApiApp({ context: pipeline.context, token: 'scim-hold-api-token-0123456789' });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  entra = await makeToken('entra-prod', 'operator', { targets: ['idp'], scimOnly: true });
  ann = await makeToken('ann', 'approver');
  unsubscribe = onScimDeletesHeld((event) => events.push(event));
});

afterAll(async () => {
  unsubscribe?.();
  await app?.close();
  await pipeline?.close();
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the deletion hold', () => {
  it('holds removals past the hour, as one plan an approver releases once; protected users stay', async () => {
    const ids: Record<string, string> = {};
    for (const name of ['keep.me', 'u1', 'u2', 'u3', 'u4', 'u5'])
      ids[name] = await createUser(name);

    // protected (any case): never deactivated nor deleted, and not counted
    const protectedPatch = await deactivate(ids['keep.me']!);
    expect(protectedPatch.status).toBe(403);
    expect(protectedPatch.body.code).toBe('PORTER_SCIM_PROTECTED');
    expect((await scim('DELETE', `/Users/${ids['keep.me']}`)).status).toBe(403);
    expect(status('keep.me')).toBe('Active');

    // within the hour's budget of 2: applied
    expect((await scim('DELETE', `/Users/${ids.u1}`)).status).toBe(204);
    expect((await deactivate(ids.u2!)).status).toBeLessThan(300);
    expect(sandbox.store.userByName('u1')).toBeUndefined();
    expect(status('u2')).toBe('Locked');

    // past it: held, retryable, nothing applied
    const held = await scim('DELETE', `/Users/${ids.u3}`);
    expect(held.status).toBe(503);
    expect(held.body.code).toBe('PORTER_SCIM_CHANGE_HELD');
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await deactivate(ids.u4!)).status).toBe(503);
    expect((await scim('DELETE', `/Users/${ids.u5}`)).status).toBe(503);
    expect(sandbox.store.userByName('u3')).toBeDefined();
    expect(status('u4')).toBe('Active');

    // one held plan, one event per held change
    expect(events.map((event) => event.type)).toEqual(Array(3).fill('scim.deletes_held'));
    const planId = events[0]!.planId;
    expect(new Set(events.map((event) => event.planId))).toEqual(new Set([planId]));
    // the channels are told once, of the plan
    await waitFor(
      async () => {
        const deliveries = await notifyDeliveries(pipeline.context);
        const told = deliveries.filter((delivery) => delivery.event === 'scim.deletes_held');
        return told.length === 1 ? told : undefined;
      },
      { what: 'one scim.deletes_held delivery' },
    );
    const [notice] = await notifyDeliveries(pipeline.context);
    expect(notice).toMatchObject({ event: 'scim.deletes_held', target: 'idp', channel: 'ops' });
    expect(notice!.title).toContain(planId);
    // the provider retries: still held, not held twice
    const retried = await scim('DELETE', `/Users/${ids.u3}`);
    expect(retried.status).toBe(503);
    expect(retried.body.detail).toContain(planId);
    const plan = await pipeline.context.store.get(planId);
    expect(plan).toMatchObject({ state: 'held', source: 'scim', total: 3 });
    expect(plan!.actions).toEqual({ delete: 2, lock: 1 });

    // four eyes: the token that sent the changes started the plan, and is no approver anyway;
    // the console's preview names the counts
    const preview = await call('GET', `/v1/imports/${planId}/approve`, ann);
    expect(preview.status).toBe(200);
    expect(preview.body.confirm).toBe('delete 2, lock 1');
    const approved = await call('POST', `/v1/imports/${planId}/approve`, ann);
    expect(approved.status).toBe(202);
    expect(sandbox.store.userByName('u3')).toBeUndefined();
    expect(sandbox.store.userByName('u5')).toBeUndefined();
    expect(status('u4')).toBe('Locked');
    const writtenBy = (await pipeline.context.store.get(planId))!.writtenBy!;
    const release = await pipeline.context.store.get(writtenBy);
    expect(release).toMatchObject({ state: 'completed', applyOf: planId });
    expect(release!.counts.succeeded).toBe(3);

    // the provider's retries after the release: answered as done, nothing written again
    const writes = structuredClone(sandbox.store.stats.writes.users);
    expect((await scim('DELETE', `/Users/${ids.u3}`)).status).toBe(204);
    expect((await scim('DELETE', `/Users/${ids.u5}`)).status).toBe(204);
    const again = await deactivate(ids.u4!);
    expect(again.status).toBeLessThan(300);
    expect(sandbox.store.stats.writes.users).toEqual(writes);
    // approved once
    expect((await call('POST', `/v1/imports/${planId}/approve`, ann)).status).toBe(409);
  });

  it('a dropped plan is not applied, and its retry is told so (409), not to wait', async () => {
    const id = await createUser('u6');
    const held = await scim('DELETE', `/Users/${id}`);
    expect(held.status).toBe(503);
    const planId = events.at(-1)!.planId;
    expect(planId).not.toBe(events[0]!.planId);
    expect((await call('DELETE', `/v1/imports/${planId}`, ann)).status).toBeLessThan(300);
    const dropped = await scim('DELETE', `/Users/${id}`);
    expect(dropped.status).toBe(409);
    expect(dropped.body.code).toBe('PORTER_SCIM_CHANGE_DROPPED');
    expect(sandbox.store.userByName('u6')).toBeDefined();
  });

  it('a group delete counts toward the same hour: past it, held in a plan of groups, released once', async () => {
    const group = await scim('POST', '/Groups', { displayName: 'Night Shift' });
    expect(group.status).toBe(201);
    const held = await scim('DELETE', `/Groups/${group.body.id}`);
    expect(held.status).toBe(503);
    expect(held.body.code).toBe('PORTER_SCIM_CHANGE_HELD');
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(sandbox.store.groupByName('Night Shift')).toBeDefined();
    const planId = events.at(-1)!.planId;
    const plan = await pipeline.context.store.get(planId);
    expect(plan).toMatchObject({ state: 'held', source: 'scim', total: 1 });
    expect(plan!.options.resource).toBe('groups');
    // the user plan of the test before is not this one
    expect(events.filter((event) => event.planId === planId)).toHaveLength(1);

    const approved = await call('POST', `/v1/imports/${planId}/approve`, ann);
    expect(approved.status).toBe(202);
    expect(sandbox.store.groupByName('Night Shift')).toBeUndefined();
    const writes = sandbox.store.stats.writes.groups.DELETE;
    // the provider's retry: done, nothing written again
    expect((await scim('DELETE', `/Groups/${group.body.id}`)).status).toBe(204);
    expect(sandbox.store.stats.writes.groups.DELETE).toBe(writes);
  });
});
