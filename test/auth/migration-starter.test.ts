/**
 * Work a worker does for someone carries that someone: a live migration's stage imports, made by
 * a real `porter worker` process (whose own principal is `cli:<its user>`), are started as the
 * principal that started the migration, audited as such, and four eyes refuses that principal
 * the apply of their dry run on a target marked `requireApproval`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { buildApiApp } from '../../src/http/build-app.js';
import type { MigrationInfo } from '../../src/migrate/migration-model.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';
import { seedSource } from '../migrate/migrate-fixture.js';

let dir: string;
let source: RunningSandbox;
let guarded: RunningSandbox;
let pipeline: Pipeline;
let worker: WorkerProcess;
let app: FastifyInstance;
let baseUrl: string;
let ann: string;
let bob: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-starter-'));
  source = await startSandbox({ port: 0 });
  guarded = await startSandbox({ port: 0 });
  const targetsFile = join(dir, 'targets.json');
  await writeFile(
    targetsFile,
    JSON.stringify({
      old: { url: source.url },
      guarded: { url: guarded.url, requireApproval: true },
    }),
  );
  await seedSource(source.url, { groups: 2, usersPerGroup: 3, aclsPerGroup: 1 });
  pipeline = await startPipeline({ workers: false, env: { PORTER_TARGETS_FILE: targetsFile } });
  // the worker is a process of its own, run by an operating-system user of its own
  worker = spawnWorker({
    ...pipeline.childEnv(),
    PORTER_TARGETS_FILE: targetsFile,
    PORTER_CLI_USER: 'worker-os-user',
  });
  app = await buildApiApp({ context: pipeline.context, token: 'starter-api-token-0123456789' });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const base = { at: new Date().toISOString(), actionId: 'setup', who: { name: 'test' } };
  const { tokens } = securityOf(pipeline.context);
  ann = (await tokens.create({ name: 'ann', role: 'approver' }, base)).token;
  bob = (await tokens.create({ name: 'bob', role: 'approver' }, base)).token;
});
afterAll(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await app?.close();
  await pipeline?.close();
  await source?.close();
  await guarded?.close();
  await rm(dir, { recursive: true, force: true });
});

function post(token: string, path: string): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
}

describe('a migration started by a principal', () => {
  it("its stage imports act as that principal, and four eyes refuses it the apply of the users stage's dry run", async () => {
    const started = await post(ann, '/v1/migrations?from=old&target=guarded&dryRun=true');
    expect(started.status).toBe(202);
    const { id, startedBy } = (await started.json()) as MigrationInfo;
    expect(startedBy).toBe('token:ann');
    const migration = await waitFor(
      async () => {
        const answer = await fetch(`${baseUrl}/v1/migrations/${id}`, {
          headers: { authorization: `Bearer ${ann}` },
        });
        const info = (await answer.json()) as MigrationInfo;
        return ['completed', 'completed_with_errors', 'failed'].includes(info.state)
          ? info
          : undefined;
      },
      { timeoutMs: 60_000, what: `migration ${id} to end` },
    );
    expect(migration.state, migration.reason).toBe('completed');
    const usersStage = migration.stages.find((stage) => stage.stage === 'users')!;
    expect(usersStage.importId).toBeDefined();
    const stageImport = await pipeline.context.store.get(usersStage.importId!);
    expect(stageImport?.options.dryRun).toBe(true);
    // not the worker's own cli:worker-os-user
    expect(stageImport?.startedBy).toBe('token:ann');

    // its audit events say who, and which migration it belongs to
    const events = (
      await securityOf(pipeline.context).audit.read({ action: 'import.start' })
    ).filter((event) => event.actionId === stageImport!.actionId);
    expect(events.map((event) => [event.phase, event.who.name])).toEqual([
      ['result', 'token:ann'],
      ['intent', 'token:ann'],
    ]);
    expect(events[0]!.what).toMatchObject({ migration: id, stage: 'users', dryRun: true });
    expect(events[0]!.what.created).toEqual([stageImport!.id]);

    const self = await post(ann, `/v1/imports/${stageImport!.id}/apply`);
    expect(self.status).toBe(403);
    expect(((await self.json()) as { error: { code: string } }).error.code).toBe(
      'PORTER_APPROVAL_SELF',
    );
    expect(guarded.store.userByName('src.user-0-0')).toBeUndefined();

    const other = await post(bob, `/v1/imports/${stageImport!.id}/apply`);
    expect(other.status).toBe(202);
  });
});
