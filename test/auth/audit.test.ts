/**
 * The audit trail: the events of actions through the HTTP API and the CLI (intent, then result
 * with the same action id), refusals and bad tokens (limited per address), tokens created and
 * revoked by the CLI (printed once, never listed), the JSON-lines file, and a CLI killed in the
 * middle of an import, which leaves the intent naming who started the import.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import type { AuditEvent } from '../../src/audit/audit-event.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';

const API_TOKEN = 'audit-api-token-0123456789';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let dir: string;
let auditFile: string;
let operator: string;
let viewer: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-audit-'));
  auditFile = join(dir, 'audit.jsonl');
  pipeline = await startPipeline({
    workers: false,
    env: { PORTER_AUTH_FAILURES_PER_MINUTE: '3', PORTER_AUDIT_FILE: auditFile },
  });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const base = { at: new Date().toISOString(), actionId: 'setup', who: { name: 'test' } };
  operator = (
    await securityOf(pipeline.context).tokens.create({ name: 'ops', role: 'operator' }, base)
  ).token;
  viewer = (
    await securityOf(pipeline.context).tokens.create({ name: 'watcher', role: 'viewer' }, base)
  ).token;
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

const cliEnv = (): Record<string, string> => ({
  ...pipeline.childEnv(),
  PORTER_CLI_USER: 'tester',
  PORTER_AUDIT_FILE: auditFile,
});

function events(query: { who?: string; action?: string } = {}): Promise<AuditEvent[]> {
  return securityOf(pipeline.context).audit.read(query);
}

const upload = csv(['username', 'email'], [['audit.one', 'one@x']]);

describe('the audit trail', () => {
  it('an import started and cancelled through the API: intent and result, who, from where, what', async () => {
    const started = await fetch(`${baseUrl}/v1/imports?resource=users&mode=upsert`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${operator}`,
        'content-type': 'text/csv',
        'user-agent': 'audit-test/1',
      },
      body: upload,
    });
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as { id: string };
    const cancelled = await fetch(`${baseUrl}/v1/imports/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${operator}` },
    });
    expect(cancelled.status).toBe(200);

    const mine = await waitFor(async () => {
      const found = await events({ who: 'token:ops' });
      return found.filter((e) => e.phase === 'result').length >= 2 ? found : undefined;
    });
    const start = mine.filter((event) => event.action === 'import.start').reverse();
    expect(start.map((event) => event.phase)).toEqual(['intent', 'result']);
    expect(start[0]!.actionId).toBe(start[1]!.actionId);
    expect(start[1]).toMatchObject({
      who: { name: 'token:ops', role: 'operator', via: 'token' },
      from: { address: '127.0.0.1', userAgent: 'audit-test/1' },
      what: { id, mode: 'upsert', resource: 'users', target: 'default', created: [id] },
      result: { ok: true, status: 202 },
    });
    const cancel = mine.find(
      (event) => event.action === 'import.cancel' && event.phase === 'result',
    );
    expect(cancel).toMatchObject({
      what: { id, state: 'cancelled' },
      result: { ok: true, status: 200 },
    });
  });

  it('a refused action is one event, and the viewer changed nothing', async () => {
    const refused = await fetch(`${baseUrl}/v1/imports?resource=users&mode=upsert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${viewer}`, 'content-type': 'text/csv' },
      body: upload,
    });
    expect(refused.status).toBe(403);
    const [event] = await events({ who: 'token:watcher', action: 'import.start' });
    expect(event).toMatchObject({
      phase: 'done',
      result: { ok: false, status: 403, code: 'PORTER_FORBIDDEN' },
    });
  });

  it('bad tokens are audit events, and past the limit an address is refused', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const response = await fetch(`${baseUrl}/v1/imports`, {
        headers: { authorization: 'Bearer guess' },
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    // the right token is refused too while the address is over the limit
    expect(
      (await fetch(`${baseUrl}/v1/imports`, { headers: { authorization: `Bearer ${API_TOKEN}` } }))
        .status,
    ).toBe(429);
    const refusals = await events({ action: 'token.refused' });
    expect(refusals).toHaveLength(3);
    expect(refusals[0]).toMatchObject({
      who: { name: 'anonymous' },
      result: { ok: false, status: 401 },
    });
    await pipeline.context.redis.del(
      `${pipeline.context.env.PORTER_PREFIX}:auth-failures:127.0.0.1`,
    );
  });

  it('porter tokens create prints the token once; list and the trail never show it; revoke ends it', async () => {
    const created = await runPorter(
      [
        'tokens',
        'create',
        '--name',
        'hr-feed',
        '--role',
        'operator',
        '--targets',
        'default',
        '--expires',
        '30d',
      ],
      cliEnv(),
    );
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^porter_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const listed = await runPorter(['tokens', 'list', '--json'], cliEnv());
    const list = JSON.parse(listed.stdout) as {
      name: string;
      role: string;
      targets: string[];
      expiresAt: string;
    }[];
    expect(list.find((entry) => entry.name === 'hr-feed')).toMatchObject({
      role: 'operator',
      targets: ['default'],
    });
    expect(listed.stdout).not.toContain(token.split('_')[2]);
    expect(
      (await fetch(`${baseUrl}/v1/imports`, { headers: { authorization: `Bearer ${token}` } }))
        .status,
    ).toBe(200);

    const revoked = await runPorter(['tokens', 'revoke', 'hr-feed'], cliEnv());
    expect(revoked.code).toBe(0);
    expect(
      (await fetch(`${baseUrl}/v1/imports`, { headers: { authorization: `Bearer ${token}` } }))
        .status,
    ).toBe(401);

    const shown = await runPorter(['audit', '--who', 'cli:tester', '--json'], cliEnv());
    const trail = JSON.parse(shown.stdout) as AuditEvent[];
    expect(trail.map((event) => event.action)).toEqual(['token.revoke', 'token.create']);
    expect(trail[1]).toMatchObject({
      phase: 'done',
      what: { name: 'hr-feed', role: 'operator', targets: ['default'] },
    });
    expect(shown.stdout).not.toContain(token.split('_')[2]);

    const lines = (await readFile(auditFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditEvent);
    expect(lines.filter((event) => event.who.name === 'cli:tester').map((e) => e.action)).toEqual(
      expect.arrayContaining(['token.create', 'token.revoke']),
    );
    await pipeline.context.redis.del(
      `${pipeline.context.env.PORTER_PREFIX}:auth-failures:127.0.0.1`,
    );
  });

  it('GET /v1/audit needs an admin and filters by who', async () => {
    expect(
      (await fetch(`${baseUrl}/v1/audit`, { headers: { authorization: `Bearer ${operator}` } }))
        .status,
    ).toBe(403);
    const response = await fetch(`${baseUrl}/v1/audit?who=token:ops&action=import.cancel`, {
      headers: { authorization: `Bearer ${API_TOKEN}` },
    });
    const found = (await response.json()) as AuditEvent[];
    expect(found.length).toBeGreaterThan(0);
    expect(
      found.every((event) => event.who.name === 'token:ops' && event.action === 'import.cancel'),
    ).toBe(true);
  });

  it('a CLI killed in the middle of an import leaves its intent, naming who started the import', async () => {
    const file = join(dir, 'people.csv');
    await writeFile(file, upload);
    const child = spawn(
      'node',
      ['bin/porter.js', 'import', file, '--resource', 'users', '--mode', 'upsert', '--wait'],
      {
        env: { ...process.env, LOG_LEVEL: 'error', ...cliEnv(), PORTER_CLI_USER: 'killed-user' },
        stdio: 'ignore',
      },
    );
    const exited = once(child, 'exit');
    // no worker runs: the import waits queued, and the command follows it until killed
    const imported = await waitFor(async () => {
      const list = await pipeline.context.store.list({ limit: 50 });
      return list.find((info) => info.startedBy === 'cli:killed-user' && info.state === 'queued');
    });
    child.kill('SIGKILL');
    await exited;
    const trail = await events({ who: 'cli:killed-user' });
    expect(trail).toHaveLength(1);
    expect(trail[0]).toMatchObject({
      action: 'import.start',
      phase: 'intent',
      what: { command: 'import', mode: 'upsert' },
    });
    expect(imported.startedBy).toBe(trail[0]!.who.name);
  });
});
