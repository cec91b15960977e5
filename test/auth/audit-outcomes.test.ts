/**
 * The audit trail says what happened. A command's result records its exit code, outcome, and
 * the state and counts it ended with: an import that wrote five users and failed one is
 * `partial` (exit 2), a held sync `held` (exit 3), an import whose upload failed `failed`, and
 * only a refusal before anything happened `refused`. Over HTTP: every intent has its result (a
 * request that matches no route writes neither), the queue dashboard's actions say
 * `via: board`, a bearer token's sign-out writes nothing (it ended no session), and
 * `porter audit --json` answers as GET /v1/audit does.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import type { AuditEvent } from '../../src/audit/audit-event.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter, type CliResult } from '../helpers/porter-cli.js';
import { seedUsers } from '../sync/sync-fixture.js';

const TOKEN = 'audit-outcomes-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let dir: string;

beforeAll(async () => {
  pipeline = await startPipeline({ env: { PORTER_QUEUES_READ_ONLY: 'false' } });
  await seedUsers(
    pipeline,
    ['held.keep', 'held.one', 'held.two', 'held.three'].map((username) => ({ username })),
  );
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  dir = await mkdtemp(join(tmpdir(), 'porter-audit-outcomes-'));
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

function trail(query: { who?: string; action?: string } = {}): Promise<AuditEvent[]> {
  return securityOf(pipeline.context).audit.read(query);
}

/** Runs porter as `cli:<user>`; its audit events, newest first. */
async function porterAs(user: string, args: string[]): Promise<[CliResult, AuditEvent[]]> {
  const result = await runPorter(args, { ...pipeline.childEnv(), PORTER_CLI_USER: user });
  return [result, await trail({ who: `cli:${user}` })];
}

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('a command records what it came to', () => {
  it('an import that wrote five users and failed one row: partial, exit 2, its counts', async () => {
    const rows = ['p.one', 'p.two', 'p.three', 'p.four', 'p.five'].map((name) => [name, '']);
    const path = await file(
      'partial.csv',
      csv(['username', 'groups'], [...rows, ['p.bad', 'NoSuchGroup']]),
    );
    const [run, events] = await porterAs('partial', [
      'import',
      path,
      '--resource',
      'users',
      '--mode',
      'create',
      '--wait',
    ]);
    expect(run.code, run.stderr).toBe(2);
    const [result, intent] = events;
    expect(intent).toMatchObject({ phase: 'intent', action: 'import.start' });
    expect(result).toMatchObject({
      phase: 'result',
      actionId: intent!.actionId,
      what: {
        state: 'completed_with_errors',
        counts: { succeeded: 5, failed: 1, skipped: 0, unprocessed: 0 },
      },
      result: { ok: false, outcome: 'partial', exitCode: 2 },
    });
    expect(result!.what.id).toBe((result!.what.created as string[])[0]);
  });

  it('a held sync: held, exit 3, nothing written', async () => {
    const path = await file('held.csv', csv(['username'], [['held.keep']]));
    const [run, [result]] = await porterAs('held', [
      'sync',
      path,
      '--resource',
      'users',
      '--scope-match',
      '^held\\.',
      '--max-deletes',
      '1',
    ]);
    expect(run.code, run.stderr).toBe(3);
    expect(result).toMatchObject({
      phase: 'result',
      what: { state: 'held' },
      result: { ok: false, outcome: 'held', exitCode: 3 },
    });
  });

  it('an import whose upload failed: failed, exit 1, the error code', async () => {
    const path = await file('unknown-column.csv', csv(['username', 'shoeSize'], [['u.one', '42']]));
    const [run, [result]] = await porterAs('failed', [
      'import',
      path,
      '--resource',
      'users',
      '--mode',
      'create',
    ]);
    expect(run.code, run.stderr).toBe(1);
    expect(result).toMatchObject({
      phase: 'result',
      what: { state: 'failed' },
      result: { ok: false, outcome: 'failed', exitCode: 1, code: 'PORTER_INPUT_UNKNOWN_COLUMN' },
    });
  });

  it('a cancel of an import that does not exist: refused, nothing happened', async () => {
    const [run, [result]] = await porterAs('refused', ['cancel', '01ARZ3NDEKTSV4RRFFQ69G5FAV']);
    expect(run.code).toBe(66);
    expect(result).toMatchObject({
      phase: 'result',
      result: { ok: false, outcome: 'refused', exitCode: 66, code: 'PORTER_NOT_FOUND' },
    });
    expect(result!.what.created).toBeUndefined();
  });

  it('porter audit shows each outcome in words', async () => {
    const shown = await runPorter(
      ['audit', '--action', 'import.', '--who', 'cli:'],
      pipeline.childEnv(),
    );
    expect(shown.stdout).toMatch(
      /cli:partial .* import\.start {2}partial: 5 succeeded, 1 failed \(exit 2\)/,
    );
    expect(shown.stdout).toMatch(/cli:held .* import\.start {2}held for approval \(exit 3\)/);
    expect(shown.stdout).toMatch(/cli:failed .* failed PORTER_INPUT_UNKNOWN_COLUMN \(exit 1\)/);
    expect(shown.stdout).toMatch(
      /cli:refused .* import\.cancel {2}refused PORTER_NOT_FOUND \(exit 66\)/,
    );
  });
});

describe('the API records every intent with its result, and no more', () => {
  it('a request to no route writes no intent; every intent has its result', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const response = await fetch(`${baseUrl}/v1/no-such-route`, { method, headers: auth });
      expect(response.status).toBe(404);
    }
    await fetch(`${baseUrl}/v1/imports/01ARZ3NDEKTSV4RRFFQ69G5FAV`, {
      method: 'DELETE',
      headers: auth,
    });
    const events = await trail({ who: 'token:PORTER_API_TOKEN' });
    const intents = events.filter((event) => event.phase === 'intent');
    expect(intents.length).toBeGreaterThan(0);
    for (const intent of intents) {
      expect(
        events.filter((event) => event.actionId === intent.actionId && event.phase === 'result'),
        `${intent.action} ${JSON.stringify(intent.what)}`,
      ).toHaveLength(1);
    }
    expect(events.some((event) => event.action === 'unlisted')).toBe(false);
    const cancel = events.find((event) => event.action === 'import.cancel' && event.result);
    expect(cancel!.result).toMatchObject({ ok: false, outcome: 'refused', status: 404 });
  });

  it('a refusal before the handler is one done event, refused', async () => {
    const response = await fetch(`${baseUrl}/v1/imports/x1/resume?wait=true`, {
      method: 'POST',
      headers: auth,
    });
    expect(response.status).toBe(400);
    const [event] = await trail({ action: 'import.resume' });
    expect(event).toMatchObject({
      phase: 'done',
      result: { ok: false, outcome: 'refused', status: 400, code: 'PORTER_USAGE' },
    });
  });

  it("the queue dashboard's actions say via: board", async () => {
    const response = await fetch(`${baseUrl}/queues/api/queues/pause`, {
      method: 'PUT',
      headers: auth,
    });
    expect(response.status).toBe(200);
    await fetch(`${baseUrl}/queues/api/queues/resume`, { method: 'PUT', headers: auth });
    const events = await trail({ action: 'queues.change' });
    expect(events).toHaveLength(4);
    for (const event of events) expect(event.what.via).toBe('board');
  });

  it('a bearer sign-out writes nothing; a session that ends writes its sign-out', async () => {
    const bearer = await fetch(`${baseUrl}/v1/session/logout`, { method: 'POST', headers: auth });
    expect(bearer.status).toBe(204);
    const boardBearer = await fetch(`${baseUrl}/queues/logout`, {
      method: 'POST',
      headers: auth,
      redirect: 'manual',
    });
    expect(boardBearer.status).toBe(303);
    expect(await trail({ action: 'signout' })).toEqual([]);

    const signedIn = await fetch(`${baseUrl}/queues/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${TOKEN}`,
      redirect: 'manual',
    });
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const out = await fetch(`${baseUrl}/queues/logout`, {
      method: 'POST',
      headers: { cookie },
      redirect: 'manual',
    });
    expect(out.status).toBe(303);
    const signouts = await trail({ action: 'signout' });
    expect(signouts).toHaveLength(1);
    expect(signouts[0]).toMatchObject({
      phase: 'done',
      who: { name: 'token:PORTER_API_TOKEN' },
      what: { via: 'board' },
      result: { ok: true, outcome: 'ok' },
    });
  });
});

describe('one format for the trail', () => {
  it('porter audit --json answers as GET /v1/audit does, on the same events', async () => {
    const query = { who: 'cli:', limit: '20' };
    const response = await fetch(`${baseUrl}/v1/audit?${new URLSearchParams(query)}`, {
      headers: auth,
    });
    const api = (await response.json()) as AuditEvent[];
    const shown = await runPorter(
      ['audit', '--json', '--who', query.who, '--limit', query.limit],
      pipeline.childEnv(),
    );
    expect(shown.code).toBe(0);
    expect(api.length).toBeGreaterThan(4);
    expect(JSON.parse(shown.stdout)).toEqual(api);
  });
});
