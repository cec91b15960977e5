/**
 * Anchors over the HTTP API against a sandbox: a rename and an email change keep the account;
 * conflicts fail, naming what they concern, and nothing is sent for them.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import type { RecordResult } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

const TOKEN = 'test-token-0123456789abcdef';
const MAPPING = JSON.stringify({
  anchor: 'id',
  join: 'email',
  columns: { login: 'username' },
  ignore: ['id'],
});
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  await pipeline.run(csv(['name'], [['Staff'], ['Sales']]), { resource: 'groups', mode: 'create' });
  const seed = [
    { username: 'twin1', substitutionMap: { porterAnchor: 'X9' } },
    { username: 'twin2', substitutionMap: { porterAnchor: 'X9' } },
    { username: 'same1', email: 'same@x.example' },
    { username: 'same2', email: 'same@x.example' },
    {
      username: 'kim',
      email: 'kim@x.example',
      groups: ['Sales'],
      substitutionMap: { porterAnchor: 'K1' },
    },
  ];
  await pipeline.run(
    JSON.stringify(seed),
    { resource: 'users', mode: 'create' },
    { format: 'json' },
  );
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

async function upload(rows: string[][], dryRun = false): Promise<RecordResult[]> {
  const form = new FormData();
  form.append('resource', 'users');
  form.append('mode', 'upsert');
  form.append('mapping', MAPPING);
  if (dryRun) form.append('dryRun', 'true');
  form.append('file', new Blob([csv(['id', 'login', 'email'], rows)]), 'feed.csv');
  const answer = await fetch(`${baseUrl}/v1/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: form,
  });
  expect(answer.status).toBe(202);
  const { id } = (await answer.json()) as { id: string };
  await pipeline.waitFinal(id);
  return pipeline.results(id);
}

async function user(username: string): Promise<Record<string, unknown> | undefined> {
  const client = pipeline.context.createAdminClient();
  try {
    return (await client.listUsers({ username }))[0] as Record<string, unknown> | undefined;
  } finally {
    await client.close();
  }
}

describe('anchors over HTTP', () => {
  it('a rename with a new email keeps the userId and the groups', async () => {
    const before = (await user('kim'))!;
    const plan = await upload([['K1', 'kim.lee', 'kim.lee@x.example']], true);
    expect(plan.map((one) => [one.key, one.action, one.status])).toEqual([
      ['kim.lee', 'rename', 'planned'],
    ]);
    const done = await upload([['K1', 'kim.lee', 'kim.lee@x.example']]);
    expect(done[0]).toMatchObject({ action: 'rename', status: 'succeeded', id: before.userId });
    expect(await user('kim')).toBeUndefined();
    expect(await user('kim.lee')).toMatchObject({
      userId: before.userId,
      groups: before.groups,
      email: 'kim.lee@x.example',
      substitutionMap: { porterAnchor: 'K1' },
    });
  });

  it('conflicts fail, never guessed: two rows one anchor, one anchor on two users, an ambiguous join', async () => {
    const results = await upload([
      ['D1', 'dora', 'dora@x.example'],
      ['D1', 'dora2', 'dora2@x.example'],
      ['X9', 'twin1', ''],
      ['S1', 'someone', 'same@x.example'],
      ['K1', 'twin2', 'kim.lee@x.example'],
    ]);
    expect(results.map((one) => [one.row, one.status, one.errorCode])).toEqual([
      [1, 'failed', 'PORTER_ANCHOR_CONFLICT'],
      [2, 'failed', 'PORTER_ANCHOR_CONFLICT'],
      [3, 'failed', 'PORTER_ANCHOR_CONFLICT'],
      [4, 'failed', 'PORTER_ANCHOR_CONFLICT'],
      [5, 'failed', 'PORTER_ANCHOR_CONFLICT'],
    ]);
    expect(results[0]!.error).toMatch(/anchor D1 is carried by rows 1 and 2/);
    expect(results[1]!.error).toMatch(/anchor D1 is carried by rows 1 and 2/);
    expect(results[2]!.error).toMatch(/twin1 \(userId \d+, anchor X9\) and twin2/);
    expect(results[3]!.error).toMatch(/same1.*and same2/);
    expect(results[4]!.error).toMatch(/twin2 cannot take the name: it is held by twin2/);
    expect(await user('dora')).toBeUndefined();
    expect(await user('someone')).toBeUndefined();
    expect(await user('kim.lee')).toMatchObject({ substitutionMap: { porterAnchor: 'K1' } });
  });
});
