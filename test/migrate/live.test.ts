/**
 * Migration from live to live: `porter migrate --from OLD --to NEW` against real sandboxes over
 * HTTP, named in a targets file, with one worker pool (the pipeline's) reading the source and
 * writing the target; the CLI runs as a child process, the producer only.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPorterContext, type PorterContext } from '../../src/app/context.js';
import {
  migrationStore,
  requireMigration,
  startLiveMigration,
  startMigration,
} from '../../src/app/migrations.js';
import { loadEnv } from '../../src/config/env.js';
import { buildApiApp } from '../../src/http/build-app.js';
import {
  FINAL_MIGRATION_STATES,
  type MigrationInfo,
  type MigrationOptions,
} from '../../src/migrate/migration-model.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { silentLogger } from '../../src/util/logger.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { forward, startProxy, type TestProxy } from '../helpers/proxy.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';
import { bundleText, seedSource } from './migrate-fixture.js';

const NAMES = ['old', 'new', 'copy', 'saved'] as const;
type Name = (typeof NAMES)[number];

let sandboxes: Record<Name, RunningSandbox>;
/** In front of `old`, as the target `flaky`: cuts the next `cutUsers` reads of users midway. */
let proxy: TestProxy;
let cutUsers = 0;
let pipeline: Pipeline;
let dir: string;
let targetsFile: string;
let env: Record<string, string>;
const extraContexts: PorterContext[] = [];

async function writeTargets(path: string, urls: Record<string, string>): Promise<void> {
  const entries = Object.fromEntries(Object.entries(urls).map(([name, url]) => [name, { url }]));
  await writeFile(path, JSON.stringify(entries));
}

beforeEach(async () => {
  const started = await Promise.all(NAMES.map(() => startSandbox({ port: 0 })));
  sandboxes = Object.fromEntries(NAMES.map((name, index) => [name, started[index]!])) as Record<
    Name,
    RunningSandbox
  >;
  dir = await mkdtemp(join(tmpdir(), 'porter-live-'));
  targetsFile = join(dir, 'targets.json');
  const oldUrl = new URL(sandboxes.old.url);
  proxy = await startProxy((incoming, outgoing) => {
    if (!(incoming.method === 'GET' && incoming.url?.includes('/userManager') && cutUsers > 0)) {
      forward(oldUrl, incoming, outgoing);
      return;
    }
    cutUsers--;
    const onward = request(
      { host: oldUrl.hostname, port: oldUrl.port, path: incoming.url, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.once('data', (chunk: Buffer) => {
          // half the answer, then the connection breaks
          outgoing.write(chunk.subarray(0, Math.floor(chunk.length / 2)), () => outgoing.destroy());
          answer.destroy();
        });
      },
    );
    onward.end();
  });
  await writeTargets(targetsFile, {
    ...Object.fromEntries(NAMES.map((name) => [name, sandboxes[name].url])),
    flaky: proxy.url,
  });
  pipeline = await startPipeline({ env: { PORTER_TARGETS_FILE: targetsFile } });
  env = { ...pipeline.childEnv(), PORTER_TARGETS_FILE: targetsFile };
  await seedSource(sandboxes.old.url, { groups: 3, usersPerGroup: 4, aclsPerGroup: 2 });
});
afterEach(async () => {
  await Promise.all(extraContexts.splice(0).map((context) => context.close()));
  proxy?.close();
  cutUsers = 0;
  await pipeline?.close();
  await Promise.all(Object.values(sandboxes ?? {}).map((sandbox) => sandbox.close()));
  await rm(dir, { recursive: true, force: true });
});

const UPSERT: MigrationOptions = {
  mode: 'upsert',
  dryRun: false,
  allowAdmin: false,
  batchSize: 100,
};

function waitMigration(context: PorterContext, migrationId: string): Promise<MigrationInfo> {
  return waitFor(
    async () => {
      const current = await requireMigration(context, migrationId);
      return FINAL_MIGRATION_STATES.has(current.state) ? current : undefined;
    },
    { timeoutMs: 120_000, what: `migration ${migrationId}` },
  );
}

/** Every write call a sandbox answered, by resource and method. */
function writes(name: Name): string {
  return JSON.stringify(sandboxes[name].store.stats.writes);
}

/** Every record a sandbox created, updated or deleted, by resource. */
function applied(name: Name): string {
  return JSON.stringify(sandboxes[name].store.stats.applied);
}

describe('porter migrate --from OLD --to NEW', () => {
  it('reads the source live and gives the target what the bundle path gives; diff --from --to says 2 before and 0 after; --save-bundle writes a bundle that migrates', async () => {
    const before = await runPorter(
      ['diff', '--from', 'old', '--to', 'new', '--out', join(dir, 'diff-before')],
      env,
    );
    expect(before.stderr).toMatch(/differences written/);
    expect(before.code).toBe(2);

    const savedFile = join(dir, 'old.json');
    const migrated = await runPorter(
      [
        'migrate',
        '--from',
        'old',
        '--to',
        'new',
        '--wait',
        '--report',
        join(dir, 'report'),
        '--save-bundle',
        savedFile,
      ],
      env,
    );
    expect(migrated.stderr).not.toMatch(/porter: /);
    expect(migrated.code).toBe(0);
    const migrationId = migrated.stdout.trim().split('\n')[0]!;
    expect(migrationId).toMatch(/^mig_/);
    expect(migrated.stderr).toMatch(/users\s+done\s+12\/12 users: 12 succeeded \(12 create\)/);
    expect(migrated.stderr).toContain(`bundle of old written to ${savedFile}`);
    const info = await requireMigration(pipeline.context, migrationId);
    expect(info).toMatchObject({ from: 'old', to: 'new', state: 'completed' });
    expect(info.options.from?.target).toBe('old');
    expect(info.options.from?.targetFingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(info.bundle.source).toBe(sandboxes.old.url);
    expect(info.totals).toEqual({ groups: 3, users: 12, acls: 6 });
    const idMap = await readFile(join(dir, 'report', 'id-map.csv'), 'utf8');
    expect(idMap.trim().split('\n')).toHaveLength(1 + 3 + 6 + 12);
    // the source was only read
    expect(sandboxes.old.store.counts()).toEqual({ users: 12, groups: 3, acls: 6 });

    const after = await runPorter(
      ['diff', '--from', 'old', '--to', 'new', '--out', join(dir, 'diff-after')],
      env,
    );
    expect(after.stderr).toContain('equal');
    expect(after.code).toBe(0);

    // the bundle path, from the same source, into another empty target
    const viaBundle = await startMigration(pipeline.context, {
      source: Readable.from([Buffer.from(await bundleText(sandboxes.old.url))]),
      fileName: 'bundle.json',
      options: { ...UPSERT, target: 'copy' },
    });
    expect((await waitMigration(pipeline.context, viaBundle.id)).state).toBe('completed');
    expect(sandboxes.new.store.counts()).toEqual(sandboxes.copy.store.counts());
    expect(applied('new')).toBe(applied('copy'));
    expect(writes('new')).toBe(writes('copy'));
    const same = await runPorter(
      ['diff', '--from', 'new', '--to', 'copy', '--out', join(dir, 'diff-same')],
      env,
    );
    expect(same.stdout).toMatch(/users\s+0\s+0\s+0\s+12/);
    expect(same.code).toBe(0);

    // what was read, kept: a bundle that porter migrate BUNDLE --to takes
    const saved = JSON.parse(await readFile(savedFile, 'utf8')) as Record<string, unknown>;
    expect(saved).toMatchObject({ porter: 'bundle', version: 1, source: sandboxes.old.url });
    expect(
      [saved.groups, saved.users, saved.acls].map((list) => (list as unknown[]).length),
    ).toEqual([3, 12, 6]);
    const fromSaved = await runPorter(['migrate', savedFile, '--to', 'saved', '--wait'], env);
    expect(fromSaved.code).toBe(0);
    const savedDiff = await runPorter(
      ['diff', savedFile, '--to', 'saved', '--out', join(dir, 'diff-saved')],
      env,
    );
    expect(savedDiff.code).toBe(0);
    expect(sandboxes.saved.store.counts()).toEqual({ users: 12, groups: 3, acls: 6 });
  }, 240_000);

  it('a read of the source broken midway starts its section over: every record once', async () => {
    cutUsers = 2;
    const started = await startLiveMigration(pipeline.context, {
      from: 'flaky',
      options: { ...UPSERT, target: 'new' },
    });
    const final = await waitMigration(pipeline.context, started.id);
    expect(cutUsers).toBe(0);
    expect(final.state).toBe('completed');
    expect(final.totals).toEqual({ groups: 3, users: 12, acls: 6 });
    const store = migrationStore(pipeline.context);
    expect(await store.sourceCount(started.id, 'users')).toBe(12);
    expect(sandboxes.new.store.counts()).toEqual({ users: 12, groups: 3, acls: 6 });
  }, 120_000);

  it('refuses an unknown source with nothing created or written, whether the producer or the worker does not know it', async () => {
    const writesBefore = writes('new');
    const store = migrationStore(pipeline.context);
    const index = `${pipeline.context.env.PORTER_PREFIX}:migrations`;
    const refused = await runPorter(['migrate', '--from', 'nope', '--to', 'new', '--wait'], env);
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain('PORTER_TARGET_UNKNOWN');
    expect(refused.stderr).toContain('no target "nope"');
    expect(await store.redis.zcard(index)).toBe(0);

    // the same source and target are one server: refused too
    const same = await runPorter(['migrate', '--from', 'new', '--to', 'new'], env);
    expect(same.stderr).toContain('same server');
    expect(same.code).not.toBe(0);

    // a producer whose targets file names a source the workers do not know (ghost), or
    // configures one they know otherwise (old, at another URL): the worker refuses to read it
    const otherFile = join(dir, 'producer-targets.json');
    await writeTargets(otherFile, {
      ghost: sandboxes.old.url,
      old: sandboxes.copy.url,
      new: sandboxes.new.url,
    });
    const producer = await createPorterContext(
      loadEnv({ ...pipeline.childEnv(), PORTER_TARGETS_FILE: otherFile }),
      { logger: silentLogger },
    );
    extraContexts.push(producer);
    for (const [from, code] of [
      ['ghost', 'PORTER_TARGET_UNKNOWN'],
      ['old', 'PORTER_TARGET_CHANGED'],
    ] as const) {
      const started = await startLiveMigration(producer, {
        from,
        options: { ...UPSERT, target: 'new' },
      });
      expect(started).toMatchObject({ state: 'receiving', from, to: 'new' });
      const final = await waitMigration(pipeline.context, started.id);
      expect(final.state).toBe('failed');
      expect(final.reason).toContain(code);
      expect(final.stages.every((stage) => stage.phase === 'pending' && !stage.importId)).toBe(
        true,
      );
      for (const resource of ['groups', 'users', 'acls'] as const) {
        expect(await store.sourceCount(started.id, resource)).toBe(0);
      }
    }
    expect(writes('new')).toBe(writesBefore);
    expect(sandboxes.new.store.counts()).toEqual({ users: 0, groups: 0, acls: 0 });
  }, 120_000);

  it('POST /v1/migrations takes from and target, and GET shows both targets', async () => {
    const token = 'live-migration-token-0123456789';
    const app: FastifyInstance = await buildApiApp({ context: pipeline.context, token });
    try {
      const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
      const headers = { authorization: `Bearer ${token}` };
      const withBody = await fetch(`${baseUrl}/v1/migrations?from=old&target=new`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(withBody.status).toBe(400);
      const unknown = await fetch(`${baseUrl}/v1/migrations?from=nope&target=new`, {
        method: 'POST',
        headers,
      });
      expect(unknown.status).toBe(400);
      expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe(
        'PORTER_TARGET_UNKNOWN',
      );

      const response = await fetch(`${baseUrl}/v1/migrations?from=old&target=new&dryRun=true`, {
        method: 'POST',
        headers,
      });
      expect(response.status).toBe(202);
      const created = (await response.json()) as MigrationInfo & { links: { self: string } };
      expect(created).toMatchObject({ from: 'old', to: 'new' });
      const final = await waitFor(
        async () => {
          const answer = await fetch(`${baseUrl}${created.links.self}`, { headers });
          const body = (await answer.json()) as MigrationInfo;
          return FINAL_MIGRATION_STATES.has(body.state) ? body : undefined;
        },
        { timeoutMs: 120_000, what: 'the migration to end' },
      );
      expect(final).toMatchObject({ state: 'completed', from: 'old', to: 'new' });
      expect(final.stages.map((stage) => [stage.stage, stage.counts?.planned])).toEqual([
        ['groups', 3],
        ['acls', 6],
        ['users', 12],
        ['memberships', 3],
      ]);
      // a dry run: nothing written
      expect(sandboxes.new.store.counts()).toEqual({ users: 0, groups: 0, acls: 0 });
    } finally {
      await app.close();
    }
  }, 120_000);
});
