/**
 * An approval shows what it approves. A held sync whose file updates 171 users before the 59 it
 * leaves out (locks): the API gives the counts and the locks first, approving with counts that
 * are not the plan's writes nothing, and `porter approve` and `porter apply` print the counts and
 * the first locks and ask, or need --yes off a terminal.
 */
import { PassThrough } from 'node:stream';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previewPlan, type PlanPreview } from '../../src/app/plan-approval.js';
import { confirmPlan } from '../../src/cli/confirm-plan.js';
import { buildApiApp } from '../../src/http/build-app.js';
import type { ImportInfo, RecordResult } from '../../src/model/import.js';
import { runPorter } from '../helpers/porter-cli.js';
import { csv, type Pipeline } from '../helpers/pipeline.js';
import {
  runSync,
  seedUsers,
  startSyncPipeline,
  status,
  syncChildEnv,
  writes,
  approverEnv,
} from './sync-fixture.js';

const TOKEN = 'approval-test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };

let pipeline: Pipeline;
let app: FastifyInstance;
let env: Record<string, string>;
let reviewer: Record<string, string>;
let dir: string;

/** `count` users named prefix.000…, all active. */
function names(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}.${String(index).padStart(3, '0')}`);
}

/** Seeds 230 users under `prefix` and holds a sync whose file updates 171 and leaves 59 out. */
async function heldSync(prefix: string, dryRun = false): Promise<ImportInfo> {
  const users = names(prefix, 230);
  await seedUsers(
    pipeline,
    users.map((username) => ({ username, email: `${username}@old.example.com` })),
  );
  const file = csv(
    ['username', 'email'],
    users.slice(0, 171).map((username) => [username, `${username}@new.example.com`]),
  );
  const { info } = await runSync(
    pipeline,
    file,
    { scopeMatch: `^${prefix}\\.`, maxDeletes: '10' },
    { dryRun },
  );
  expect(info.state).toBe(dryRun ? 'completed' : 'held');
  expect(info.actions).toMatchObject({ lock: 59, update: 171 });
  return info;
}

beforeAll(async () => {
  pipeline = await startSyncPipeline();
  env = syncChildEnv(pipeline);
  reviewer = await approverEnv(pipeline, 'reviewer');
  dir = await mkdtemp(join(tmpdir(), 'porter-approval-'));
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

describe('HTTP: what an approval approves', () => {
  it('GET /v1/imports/{id}/approve gives the counts, locks first, and the first locks', async () => {
    const held = await heldSync('ha');
    const answer = await app.inject({
      method: 'GET',
      url: `/v1/imports/${held.id}/approve`,
      headers: auth,
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const preview = answer.json<PlanPreview>();
    expect(preview.writes).toEqual([
      { action: 'lock', records: 59 },
      { action: 'update', records: 171 },
    ]);
    expect(preview.confirm).toBe('lock 59, update 171');
    expect(preview.removals).toBe(59);
    expect(preview.firstRemovals).toHaveLength(20);
    expect(preview.firstRemovals.every((record) => record.action === 'lock')).toBe(true);
    expect(preview.firstRemovals[0]).toMatchObject({ key: 'ha.171', serverOnly: true });
    expect(preview.target).toEqual({
      name: 'default',
      url: pipeline.sandbox.url.replace(/\/$/, ''),
    });

    // a held sync is not a dry run: there is nothing to apply
    const apply = await app.inject({
      method: 'GET',
      url: `/v1/imports/${held.id}/apply`,
      headers: auth,
    });
    expect(apply.statusCode).toBe(409);
  });

  it('the records page reads the locks and deletes first, past the updates before them', async () => {
    const held = await heldSync('hb');
    const page = await app.inject({
      method: 'GET',
      url: `/v1/imports/${held.id}/records?status=planned&action=delete,lock&limit=100`,
      headers: auth,
    });
    expect(page.statusCode, page.body).toBe(200);
    const { records, more } = page.json<{ records: RecordResult[]; more: boolean }>();
    expect(records).toHaveLength(59);
    expect(more).toBe(false);
    expect(records.every((record) => record.action === 'lock' && record.serverOnly)).toBe(true);

    const serverOnly = await app.inject({
      method: 'GET',
      url: `/v1/imports/${held.id}/records?serverOnly=true&limit=500`,
      headers: auth,
    });
    expect(serverOnly.json<{ records: RecordResult[] }>().records).toHaveLength(59);
    const fileRows = await app.inject({
      method: 'GET',
      url: `/v1/imports/${held.id}/records?serverOnly=false&action=update&limit=500`,
      headers: auth,
    });
    const updates = fileRows.json<{ records: RecordResult[] }>().records;
    expect(updates).toHaveLength(171);
    expect(updates.some((record) => record.serverOnly)).toBe(false);

    const unknown = await app.inject({
      method: 'GET',
      url: `/v1/imports/${held.id}/records?action=erase`,
      headers: auth,
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('erase is not one of');
  });

  it('POST approve with counts that are not the plan writes nothing; with its counts it approves', async () => {
    const held = await heldSync('hc');
    const before = writes(pipeline);
    const wrong = await app.inject({
      method: 'POST',
      url: `/v1/imports/${held.id}/approve`,
      headers: auth,
      payload: { confirm: 'update 171' },
    });
    expect(wrong.statusCode).toBe(409);
    expect(wrong.json()).toMatchObject({ error: { code: 'PORTER_CONFLICT' } });
    expect(wrong.body).toContain('writes lock 59, update 171, not \\"update 171\\"');
    expect((await pipeline.context.store.get(held.id))?.state).toBe('held');
    expect(writes(pipeline)).toBe(before);

    const right = await app.inject({
      method: 'POST',
      url: `/v1/imports/${held.id}/approve?confirm=${encodeURIComponent('Lock 59,update 171')}`,
      headers: auth,
    });
    expect(right.statusCode, right.body).toBe(202);
    const done = await pipeline.waitFinal(right.json<{ id: string }>().id);
    expect(done.actions).toMatchObject({ lock: 59, update: 171 });
    expect(status(pipeline, 'hc.229')).toBe('Locked');
  });
});

describe('CLI: porter approve and porter apply say what they write and ask', () => {
  it('off a terminal, approve without --yes prints the counts and first locks and writes nothing', async () => {
    const held = await heldSync('hd');
    const before = writes(pipeline);
    const run = await runPorter(['approve', held.id], env);
    expect(run.code, run.stderr).toBe(64);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`held sync ${held.id} writes: lock 59, update 171`);
    expect(run.stderr).toContain('deletes and locks (59), first:');
    expect(run.stderr).toMatch(/ {2}lock {3}hd\.171 \(only on the server\)/);
    expect(run.stderr).toContain(`… and 49 more: porter report ${held.id} --status planned`);
    expect(run.stderr).toContain(`porter approve ${held.id} --yes`);
    expect(run.stderr).toContain(`to target default (${pipeline.sandbox.url})`);
    expect((await pipeline.context.store.get(held.id))?.state).toBe('held');
    expect(writes(pipeline)).toBe(before);

    const approved = await runPorter(['approve', held.id, '--yes', '--wait'], reviewer);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stderr).toContain('writes: lock 59, update 171');
    expect(status(pipeline, 'hd.200')).toBe('Locked');
  });

  it('apply of a dry run asks in the same way', async () => {
    const plan = await heldSync('he', true);
    const run = await runPorter(['apply', plan.id], env);
    expect(run.code, run.stderr).toBe(64);
    expect(run.stderr).toContain(`dry run ${plan.id} writes: lock 59, update 171`);
    expect(run.stderr).toContain(`porter apply ${plan.id} --yes`);
    const list = await pipeline.context.store.list({ limit: 100 });
    expect(list.some((info) => info.applyOf === plan.id)).toBe(false);
  });

  it('on a terminal it asks, naming the counts; only yes goes on', async () => {
    const held = await heldSync('hf');
    const preview = await previewPlan(pipeline.context, held, 'approve');
    const ask = async (answer: string): Promise<{ text: string; error?: unknown }> => {
      const input = Object.assign(new PassThrough(), { isTTY: true });
      const output = new PassThrough();
      let text = '';
      output.on('data', (chunk: Buffer) => (text += chunk.toString()));
      const asked = confirmPlan(preview, { yes: false }, { input, output });
      input.write(`${answer}\n`);
      const error = await asked.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      return { text, error };
    };
    const no = await ask('n');
    // the question names the target, by name and address, before the counts
    expect(no.text).toContain(
      `Approve held sync ${held.id}: write its plan to target default (${pipeline.sandbox.url})? It writes lock 59, update 171 [y/N]`,
    );
    expect(no.error).toMatchObject({ code: 'PORTER_USAGE' });
    const enter = await ask('');
    expect(enter.error).toMatchObject({ code: 'PORTER_USAGE' });
    const yes = await ask('y');
    expect(yes.error).toBeUndefined();
  });

  it('a written script keeps working with --yes (the file is the one a cron job would sync)', async () => {
    const users = names('hg', 3);
    await seedUsers(
      pipeline,
      users.map((username) => ({ username })),
    );
    const path = join(dir, 'hg.csv');
    await writeFile(path, csv(['username'], [[users[0]!]]));
    const sync = await runPorter(
      ['sync', path, '--resource', 'users', '--scope-match', '^hg\\.', '--max-deletes', '0'],
      env,
    );
    expect(sync.code, sync.stderr).toBe(3);
    const id = sync.stdout.trim();
    // four eyes: another person approves what this one started, with an approver's token
    const approved = await runPorter(['approve', id, '--yes', '--wait'], reviewer);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stderr).toContain('writes: lock 2');
    expect(status(pipeline, 'hg.002')).toBe('Locked');
  });
});
