/**
 * The deletion threshold: a sync whose plan locks or deletes more than it allows writes
 * nothing and ends `held`; approving it writes the plan as planned (a record changed since is
 * PORTER_PLAN_STALE, not written); cancelling it drops it.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { approveImport, cancelImport } from '../../src/app/imports.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { securityOf } from '../../src/app/security.js';
import { csv, type Pipeline } from '../helpers/pipeline.js';
import { outcomes, runSync, seedUsers, startSyncPipeline, status, writes } from './sync-fixture.js';

let pipeline: Pipeline;
const staff = Array.from({ length: 12 }, (_, index) => `staff${String(index).padStart(2, '0')}`);

beforeEach(async () => {
  pipeline = await startSyncPipeline();
  await seedUsers(
    pipeline,
    staff.map((username) => ({ username, email: `${username}@x` })),
  );
});
afterEach(async () => {
  await pipeline?.close();
});

/** The file keeps the first two, with a new email for one: ten users are left out. */
const file = csv(
  ['username', 'email'],
  [
    ['staff00', 'changed@x'],
    ['staff01', 'staff01@x'],
  ],
);

describe('the deletion threshold', () => {
  it('default (the smaller of 500 and 10%): ten locks of twelve hold the sync; nothing is written', async () => {
    const before = writes(pipeline);
    const { info, results } = await runSync(pipeline, file);
    expect(info.state).toBe('held');
    expect(info.settled).toBe(true);
    expect(writes(pipeline)).toBe(before);
    expect(info.sync).toMatchObject({ inScope: 12, locks: 10, threshold: 1, held: true });
    expect(info.counts).toMatchObject({ planned: 12, succeeded: 0 });
    expect(info.actions).toMatchObject({ lock: 10, update: 1, unchanged: 1 });
    expect(results.filter((result) => result.serverOnly)).toHaveLength(10);
    expect(pipeline.sandbox.store.userByName('staff00')?.email).toBe('staff00@x');
    expect(staff.every((username) => status(pipeline, username) === 'Active')).toBe(true);
  });

  it('approve writes the plan as planned; a record changed since is PORTER_PLAN_STALE and not written', async () => {
    const { info: held } = await runSync(pipeline, file, { maxDeletes: '5' });
    expect(held.state).toBe('held');
    // someone edits staff05 after the plan was made
    const client = pipeline.context.createAdminClient();
    const edited = pipeline.sandbox.store.userByName('staff05')!;
    await client.putUsers([{ ...edited, city: 'Elsewhere' }]);
    await client.close();

    const application = await approveImport(pipeline.context, held.id);
    expect(application.applyOf).toBe(held.id);
    const done = await pipeline.waitFinal(application.id);
    const results = await pipeline.results(application.id);
    expect(done.state).toBe('completed_with_errors');
    expect(outcomes(results)).toMatchObject({
      staff00: 'succeeded update',
      'staff02*': 'succeeded lock',
      'staff05*': 'failed lock',
    });
    expect(results.find((result) => result.key === 'staff05')?.errorCode).toBe('PORTER_PLAN_STALE');
    expect(status(pipeline, 'staff05')).toBe('Active');
    expect(status(pipeline, 'staff02')).toBe('Locked');
    expect(status(pipeline, 'staff11')).toBe('Locked');
    expect(pipeline.sandbox.store.userByName('staff00')?.email).toBe('changed@x');
    expect(done.sync).toMatchObject({ approvedFrom: held.id, held: false });

    const after = await pipeline.context.store.get(held.id);
    expect(after?.state).toBe('completed');
    expect(after?.reason).toContain(application.id);
    await expect(approveImport(pipeline.context, held.id)).rejects.toMatchObject({
      code: 'PORTER_CONFLICT',
    });
  });

  it('cancel drops a held sync: it cannot be approved, and nothing was written', async () => {
    const before = writes(pipeline);
    const { info: held } = await runSync(pipeline, file);
    const cancelled = await cancelImport(pipeline.context, held.id);
    expect(cancelled.state).toBe('cancelled');
    await expect(approveImport(pipeline.context, held.id)).rejects.toMatchObject({
      code: 'PORTER_CONFLICT',
    });
    expect(writes(pipeline)).toBe(before);
  });

  it('under the threshold the sync writes at once; N% counts against the in-scope records', async () => {
    // ten of twelve is 83%
    const { info } = await runSync(pipeline, file, { maxDeletes: '84%' });
    expect(info.state).toBe('completed');
    expect(info.sync).toMatchObject({ threshold: 10, locks: 10, held: false });
    expect(status(pipeline, 'staff11')).toBe('Locked');
  });

  it('a dry run plans the locks without holding or writing; applying it holds when it passes', async () => {
    const before = writes(pipeline);
    const { info: plan, results } = await runSync(pipeline, file, {}, { dryRun: true });
    expect(plan.state).toBe('completed');
    expect(plan.sync).toMatchObject({ locks: 10, held: false });
    expect(outcomes(results)).toMatchObject({ 'staff03*': 'planned lock' });
    expect(writes(pipeline)).toBe(before);
    // porter apply is no way round the threshold: the application is held in its turn
    const { applyImport } = await import('../../src/app/imports.js');
    const applied = await applyImport(pipeline.context, plan.id);
    const info = await pipeline.waitFinal(applied.id);
    expect(info.state).toBe('held');
    expect(writes(pipeline)).toBe(before);
  });
});

describe('over HTTP', () => {
  const TOKEN = 'sync-http-token-0123456789abcdef';
  let app: FastifyInstance;
  beforeEach(async () => {
    app = await buildApiApp({ context: pipeline.context, token: TOKEN, maxUploadBytes: 1 << 20 });
  });
  afterEach(async () => {
    await app?.close();
  });
  const auth = { authorization: `Bearer ${TOKEN}` };

  it('mode=sync holds past the threshold; POST /v1/imports/{id}/approve writes the plan', async () => {
    const before = writes(pipeline);
    const created = await app.inject({
      method: 'POST',
      url: '/v1/imports?resource=users&mode=sync&maxDeletes=3',
      headers: { ...auth, 'content-type': 'text/csv' },
      payload: file,
    });
    expect(created.statusCode).toBe(202);
    const { id } = created.json<{ id: string }>();
    const held = await pipeline.waitFinal(id);
    expect(held.state).toBe('held');
    const shown = await app.inject({ method: 'GET', url: `/v1/imports/${id}`, headers: auth });
    expect(shown.json()).toMatchObject({
      state: 'held',
      sync: { locks: 10, threshold: 3, held: true },
    });
    expect(writes(pipeline)).toBe(before);

    // four eyes: the token that started the sync cannot approve it; a second approver can
    const self = await app.inject({
      method: 'POST',
      url: `/v1/imports/${id}/approve`,
      headers: auth,
    });
    expect(self.statusCode).toBe(403);
    expect(self.json()).toMatchObject({ error: { code: 'PORTER_APPROVAL_SELF' } });
    const second = await securityOf(pipeline.context).tokens.create(
      { name: 'threshold-approver', role: 'approver' },
      { at: new Date().toISOString(), actionId: 'test', who: { name: 'test' } },
    );
    const approverAuth = { authorization: `Bearer ${second.token}` };
    const approved = await app.inject({
      method: 'POST',
      url: `/v1/imports/${id}/approve`,
      headers: approverAuth,
    });
    expect(approved.statusCode).toBe(202);
    const done = await pipeline.waitFinal(approved.json<{ id: string }>().id);
    expect(done.state).toBe('completed');
    expect(status(pipeline, 'staff07')).toBe('Locked');
    const again = await app.inject({
      method: 'POST',
      url: `/v1/imports/${id}/approve`,
      headers: approverAuth,
    });
    expect(again.statusCode).toBe(409);
  });

  it('DELETE cancels a held sync; bad sync options are refused with 400', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/v1/imports?resource=users&mode=sync&missing=delete',
      headers: { ...auth, 'content-type': 'text/csv' },
      payload: file,
    });
    const { id } = created.json<{ id: string }>();
    expect((await pipeline.waitFinal(id)).state).toBe('held');
    const cancelled = await app.inject({
      method: 'DELETE',
      url: `/v1/imports/${id}`,
      headers: auth,
    });
    expect(cancelled.json()).toMatchObject({ state: 'cancelled' });
    expect(pipeline.sandbox.store.userByName('staff09')).toBeDefined();

    for (const query of [
      'resource=users&mode=sync&scopeMatch=(a%2B)%2B',
      'resource=users&mode=upsert&missing=delete',
      'resource=groups&mode=sync&missing=lock',
      'resource=users&mode=sync&lookup=each',
    ]) {
      const refused = await app.inject({
        method: 'POST',
        url: `/v1/imports?${query}`,
        headers: { ...auth, 'content-type': 'text/csv' },
        payload: file,
      });
      expect(refused.statusCode, query).toBe(400);
    }
  });
});
