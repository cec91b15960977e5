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
