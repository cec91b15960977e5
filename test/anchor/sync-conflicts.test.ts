/**
 * A sync row that fails on an anchor conflict still stands for the accounts its anchor met: a
 * sync never takes them for accounts the file leaves out, so it never locks the person the
 * row is about (over HTTP, against the sandbox).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import type { RecordResult } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

const TOKEN = 'test-token-sync-conflicts-0123456789';
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
  const seed = [
    { username: 'pat', email: 'pat@x.example', substitutionMap: { porterAnchor: 'P1' } },
    { username: 'rue', email: 'rue@x.example' },
    { username: 'sam', email: 'sam@x.example', substitutionMap: { porterAnchor: 'S1' } },
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

async function syncPlan(rows: string[][]): Promise<RecordResult[]> {
  const form = new FormData();
  form.append('resource', 'users');
  form.append('mode', 'sync');
  form.append('mapping', MAPPING);
  form.append('dryRun', 'true');
  form.append('file', new Blob([csv(['id', 'login', 'email'], rows)]), 'directory.csv');
  const answer = await fetch(`${baseUrl}/v1/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: form,
  });
  expect(answer.status, await answer.clone().text()).toBe(202);
  const { id } = (await answer.json()) as { id: string };
  await pipeline.waitFinal(id);
  return pipeline.results(id);
}

describe('a sync row that fails on its anchor', () => {
  it('P1 renamed to a name another account holds: the row fails, and neither account is locked', async () => {
    const plan = await syncPlan([
      ['P1', 'rue', 'pat@x.example'],
      ['S1', 'sam', 'sam@x.example'],
    ]);
    const byKey = new Map(plan.map((result) => [result.key, result]));
    expect(byKey.get('rue')).toMatchObject({
      status: 'failed',
      errorCode: 'PORTER_ANCHOR_CONFLICT',
    });
    // pat is the person of row 1: never "left out" by the file
    expect(plan.filter((result) => result.action === 'lock')).toEqual([]);
    expect(byKey.get('sam')).toMatchObject({ status: 'planned' });
  });
});
