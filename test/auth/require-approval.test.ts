/**
 * Four eyes per target: a dry run on a target marked `requireApproval: true` is applied by
 * another principal than the one who started it, and the application is recorded on the plan;
 * `requireApproval: false` lets whoever started a held sync approve it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { runAs } from '../../src/auth/acting.js';
import { retryImport } from '../../src/app/imports.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let dir: string;
let guarded: RunningSandbox;
let relaxed: RunningSandbox;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let ann: string;
let bob: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-approval-'));
  guarded = await startSandbox({ port: 0 });
  relaxed = await startSandbox({ port: 0 });
  const targetsFile = join(dir, 'targets.json');
  await writeFile(
    targetsFile,
    JSON.stringify({
      guarded: { url: guarded.url, requireApproval: true },
      relaxed: { url: relaxed.url, requireApproval: false },
    }),
  );
  pipeline = await startPipeline({ env: { PORTER_TARGETS_FILE: targetsFile } });
  app = await buildApiApp({ context: pipeline.context, token: 'approval-api-token-0123456789' });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const base = { at: new Date().toISOString(), actionId: 'setup', who: { name: 'test' } };
  const { tokens } = securityOf(pipeline.context);
  ann = (await tokens.create({ name: 'ann', role: 'approver' }, base)).token;
  bob = (await tokens.create({ name: 'bob', role: 'approver' }, base)).token;
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await guarded?.close();
  await relaxed?.close();
  await rm(dir, { recursive: true, force: true });
});

function post(token: string, path: string, body?: string): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'text/csv' } : {}) },
    body,
  });
}

describe('requireApproval on a target', () => {
  it('true: a dry run is applied by another principal, and the plan records who applied it', async () => {
    const file = csv(['username', 'email'], [['guard.one', 'one@x']]);
    const started = await post(
      ann,
      '/v1/imports?resource=users&mode=upsert&dryRun=true&target=guarded',
      file,
    );
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as { id: string };
    const plan = await pipeline.waitFinal(id);

    const self = await post(ann, `/v1/imports/${id}/apply`);
    expect(self.status).toBe(403);
    expect(((await self.json()) as { error: { code: string } }).error.code).toBe(
      'PORTER_APPROVAL_SELF',
    );
    expect(guarded.store.userByName('guard.one')).toBeUndefined();

    const other = await post(bob, `/v1/imports/${id}/apply`);
    expect(other.status).toBe(202);
    const application = (await other.json()) as { id: string };
    await pipeline.waitFinal(application.id);
    expect(guarded.store.userByName('guard.one')).toBeDefined();
    expect((await pipeline.context.store.get(id))?.approval).toMatchObject({
      by: 'token:bob',
      applicationId: application.id,
      counts: plan.counts,
    });
  });

  it('a principal is one whatever the case of its name: Wally does not apply what wally started', async () => {
    const { tokens } = securityOf(pipeline.context);
    const made = { at: new Date().toISOString(), actionId: 'made', who: { name: 'test' } };
    const wally = (await tokens.create({ name: 'Wally', role: 'approver' }, made)).token;
    // a plan that token:wally started (as a session or another process records it)
    const principal = { name: 'token:wally', role: 'approver' as const, via: 'token' as const };
    const plan = await runAs({ principal, created: [] }, () =>
      pipeline.submit(csv(['username', 'email'], [['guard.case', 'case@x']]), {
        resource: 'users',
        mode: 'upsert',
        dryRun: true,
        target: 'guarded',
      }),
    );
    await pipeline.waitFinal(plan.id);
    const refused = await post(wally, `/v1/imports/${plan.id}/apply`);
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('PORTER_APPROVAL_SELF');
    // the refusal says how a second approver comes about
    expect(body.error.message).toContain('porter tokens create --name NAME --role approver');
    expect(guarded.store.userByName('guard.case')).toBeUndefined();
    // and no second token takes a name that differs by case only
    await expect(tokens.create({ name: 'wally', role: 'approver' }, made)).rejects.toMatchObject({
      code: 'PORTER_CONFLICT',
    });
  });

  it("a retried dry run is still its starter's: they do not apply the retry either", async () => {
    const principal = { name: 'token:ann', role: 'approver' as const, via: 'token' as const };
    // a group that does not exist yet: its row fails, and a retry may send it again
    const plan = await runAs({ principal, created: [] }, () =>
      pipeline.submit(
        csv(['username', 'email', 'groups'], [['guard.retried', 'retried@x', 'Not Yet']]),
        { resource: 'users', mode: 'upsert', dryRun: true, target: 'guarded' },
      ),
    );
    expect((await pipeline.waitFinal(plan.id)).counts.failed).toBe(1);
    // an operator retries it; the records are still ann's
    const operator = { name: 'token:carl', role: 'operator' as const, via: 'token' as const };
    const { import: retry } = await runAs({ principal: operator, created: [] }, () =>
      retryImport(pipeline.context, plan.id),
    );
    expect(retry).toMatchObject({ startedBy: 'token:carl', onBehalfOf: 'token:ann' });
    await pipeline.waitFinal(retry.id);
    const refused = await post(ann, `/v1/imports/${retry.id}/apply`);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'PORTER_APPROVAL_SELF',
    );
  });

  it('false: whoever started a held sync may approve it', async () => {
    const client = pipeline.context.createAdminClient(undefined, 'relaxed');
    await client.postUsers(
      ['a', 'b', 'c'].map((name) => ({ username: `relaxed.${name}`, email: `${name}@x` })),
    );
    await client.close();
    const started = await post(
      ann,
      '/v1/imports?resource=users&mode=sync&target=relaxed',
      csv(['username', 'email'], [['relaxed.a', 'a@x']]),
    );
    const { id } = (await started.json()) as { id: string };
    expect((await pipeline.waitFinal(id)).state).toBe('held');
    const approved = await post(ann, `/v1/imports/${id}/approve`);
    expect(approved.status).toBe(202);
  });
});
