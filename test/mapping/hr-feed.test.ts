/** The worked HR example (examples/hr) through the CLI and the HTTP API, against a sandbox. */
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';

const TOKEN = 'test-token-0123456789abcdef';
const EXPORT = 'examples/hr/hr-export.csv';
const MAPPING = 'examples/hr/mapping.json';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  await pipeline.run(csv(['name'], [['Staff'], ['Marketing'], ['Engineering'], ['Sales']]), {
    resource: 'groups',
    mode: 'create',
  });
  // someone else holds mgarcia already: the first Maria García gets the next candidate
  await pipeline.run(csv(['username', 'email'], [['mgarcia', 'm.garcia@elsewhere.example']]), {
    resource: 'users',
    mode: 'create',
  });
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

interface ServerUser {
  username: string;
  status?: string;
  groups?: number[];
  email?: string;
}

async function usersByName(): Promise<Map<string, ServerUser & { groupNames: string[] }>> {
  const client = pipeline.context.createAdminClient();
  try {
    const groups = new Map((await client.listGroups()).map((group) => [group.id, group.name]));
    const users = (await client.listUsers()) as ServerUser[];
    return new Map(
      users.map((user) => [
        user.username,
        { ...user, groupNames: (user.groups ?? []).map((id) => groups.get(id)!).sort() },
      ]),
    );
  } finally {
    await client.close();
  }
}

/** The mapping file as it ships: its tables inline, so the HTTP API takes it as it is. */
async function inlineMapping(): Promise<string> {
  return readFile(MAPPING, 'utf8');
}

async function postImport(fields: Record<string, string>): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([await readFile(EXPORT)], { type: 'text/csv' }), 'hr-export.csv');
  return fetch(`${baseUrl}/v1/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: form,
  });
}

describe('the HR example', () => {
  it('porter map test shows each row through the mapping, $unique against the target', async () => {
    const result = await runPorter(
      ['map', 'test', EXPORT, '--map', MAPPING, '--target', 'default', '--format', 'json'],
      pipeline.childEnv(),
    );
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout) as {
      rows: Array<{ status: string; output?: Record<string, unknown>; message?: string }>;
      directoryRead: boolean;
    };
    expect(answer.directoryRead).toBe(true);
    expect(answer.rows.map((row) => row.output?.username ?? row.status)).toEqual([
      'jmuller',
      'maria.garcia',
      'mgarcia2',
      // a leaver who never had an account is not created
      'skipped',
      'skipped',
      'arossi',
      'aoneil',
    ]);
    const text = await runPorter(
      ['map', 'test', EXPORT, '--map', MAPPING, '--rows', '2'],
      pipeline.childEnv(),
    );
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/row 1 \(line 2\): ok\n {2}input:\n {4}Employee ID = E1001/);
    expect(text.stdout).toMatch(/ {4}username +→ jmuller\n/);
    expect(text.stdout).toMatch(/2 rows: 2 ok, 0 skipped, 0 failed\n$/);
  });

  it('a dry run over HTTP plans the computed values; a syntax error is a 400', async () => {
    const mapping = await inlineMapping();
    const bad = await postImport({
      resource: 'users',
      mode: 'upsert',
      mapping: JSON.stringify({ fields: { username: '$lowercase(`Given Name`' } }),
    });
    expect(bad.status).toBe(400);
    const refusal = (await bad.json()) as { error: { code: string; message: string } };
    expect(refusal.error.code).toBe('PORTER_MAPPING_INVALID');
    expect(refusal.error.message).toMatch(/fields\.username: syntax error.*position 23/);

    const answer = await postImport({ resource: 'users', mode: 'upsert', dryRun: 'true', mapping });
    expect(answer.status).toBe(202);
    const { id } = (await answer.json()) as { id: string };
    await pipeline.waitFinal(id);
    const results = await pipeline.results(id);
    expect(results.map((result) => [result.key, result.status, result.action])).toEqual([
      ['jmuller', 'planned', 'create'],
      ['maria.garcia', 'planned', 'create'],
      ['mgarcia2', 'planned', 'create'],
      [undefined, 'skipped', undefined],
      [undefined, 'skipped', undefined],
      ['arossi', 'planned', 'create'],
      ['aoneil', 'planned', 'create'],
    ]);
    expect(results[3]!.error).toMatch(/status Locked and no account on the DAM holds anchor E1004/);
    expect(results[4]!.error).toMatch(/"when" is false/);
    // the plan shows what would be written: the computed values
    const planned = Object.fromEntries(
      (results[0]!.changes ?? []).map((change) => [
        change.field,
        Array.isArray(change.to)
          ? (change.to as number[]).map((id) => change.names?.[id]).sort()
          : change.to,
      ]),
    );
    // the anchor is kept in the user record; a date Excel saved as 3/1/2027 is read
    expect(planned).toMatchObject({
      username: 'jmuller',
      status: 'Active',
      groups: ['Marketing', 'Staff'],
      substitutionMap: { porterAnchor: 'E1001', startDate: '2027-03-01' },
    });
    expect(results[6]!.changes?.find((change) => change.field === 'username')?.to).toBe('aoneil');
    expect((await usersByName()).has('jmuller')).toBe(false);
  });

  it('porter import --map creates the users, groups and statuses; a second run changes nothing', async () => {
    const args = [
      'import',
      EXPORT,
      '--resource',
      'users',
      '--mode',
      'upsert',
      '--map',
      MAPPING,
      '--wait',
    ];
    const first = await runPorter(args, pipeline.childEnv());
    expect(first.stderr).toMatch(/5 succeeded, 0 failed, 2 skipped/);
    const users = await usersByName();
    expect(users.get('jmuller')).toMatchObject({
      status: 'Active',
      email: 'jose.muller@acme.example',
      groupNames: ['Marketing', 'Staff'],
    });
    expect(users.get('maria.garcia')).toMatchObject({ groupNames: ['Engineering', 'Staff'] });
    expect(users.get('mgarcia2')).toMatchObject({ groupNames: ['Sales', 'Staff'] });
    expect(users.get('mgarcia')).toMatchObject({ email: 'm.garcia@elsewhere.example' });
    expect(users.has('snowak')).toBe(false);
    expect(users.get('arossi')).toMatchObject({ groupNames: ['Staff'] });
    expect(users.get('aoneil')).toMatchObject({ groupNames: ['Sales', 'Staff'] });
    expect([...users.keys()].some((name) => name.includes('dubois'))).toBe(false);

    // the same feed again: the anchor keeps everyone's name
    const again = await runPorter(args, pipeline.childEnv());
    expect(again.stderr).toMatch(/5 succeeded, 0 failed, 2 skipped/);
    expect((await usersByName()).size).toBe(users.size);
  });
});
