import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { bundleText, seedSource } from './migrate-fixture.js';

const TOKEN = 'test-token-0123456789abcdef';
let source: RunningSandbox;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  source = await startSandbox({ port: 0 });
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN, maxUploadBytes: 1 << 20 });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await source?.close();
});

const auth = { authorization: `Bearer ${TOKEN}` };

interface MigrationBody {
  id: string;
  state: string;
  stages: { stage: string; phase: string; counts?: Record<string, number> }[];
  links: Record<string, string>;
}

describe('POST /v1/migrations', () => {
  it('takes a bundle as the body and GET /v1/migrations/:id follows its stages', async () => {
    await seedSource(source.url, { groups: 2, usersPerGroup: 3, aclsPerGroup: 1 });
    const response = await fetch(`${baseUrl}/v1/migrations?mode=create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: await bundleText(source.url),
    });
    expect(response.status).toBe(202);
    const created = (await response.json()) as MigrationBody;
    expect(created.id).toMatch(/^mig_/);
    expect(created.links.self).toBe(`/v1/migrations/${created.id}`);
    const final = await waitFor(
      async () => {
        const answer = await fetch(`${baseUrl}${created.links.self}`, { headers: auth });
        const body = (await answer.json()) as MigrationBody;
        return body.state === 'running' ? undefined : body;
      },
      { timeoutMs: 120_000, what: 'the migration to end' },
    );
    expect(final.state).toBe('completed');
    expect(final.stages.map((stage) => [stage.stage, stage.counts?.succeeded])).toEqual([
      ['groups', 2],
      ['acls', 2],
      ['users', 6],
      ['memberships', 2],
    ]);
    const idMap = await fetch(`${baseUrl}${created.links.idMap}`, { headers: auth });
    expect(idMap.status).toBe(200);
    expect(idMap.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await idMap.text()).trim().split('\n');
    expect(lines[0]).toBe('resource,sourceId,targetId,key');
    // 2 groups, 2 ACLs and 6 users, each mapped from its source id to its target id
    expect(
      lines
        .slice(1)
        .map((line) => line.split(',')[0])
        .sort(),
    ).toEqual(
      [...Array(2).fill('acls'), ...Array(2).fill('groups'), ...Array(6).fill('users')].sort(),
    );
    const unknown = await fetch(`${baseUrl}/v1/migrations/mig_nope/id-map.csv`, { headers: auth });
    expect(unknown.status).toBe(404);
  }, 180_000);

  it('refuses what is not a bundle, and answers 404 for an unknown migration', async () => {
    const refused = await fetch(`${baseUrl}/v1/migrations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ porter: 'bundle', version: 2, groups: [] }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: 'PORTER_INPUT_UNREADABLE' } });
    const unknown = await fetch(`${baseUrl}/v1/migrations/mig_nope`, { headers: auth });
    expect(unknown.status).toBe(404);
  });

  it('GET /v1/migrations lists them newest first, limited, behind the token', async () => {
    const answer = await fetch(`${baseUrl}/v1/migrations`, { headers: auth });
    expect(answer.status).toBe(200);
    const list = (await answer.json()) as MigrationBody[];
    // the refused bundle of the test before, then the completed migration
    expect(list.map((item) => item.state)).toEqual(['failed', 'completed']);
    expect(list[1]!.stages.map((stage) => stage.phase)).toEqual(['done', 'done', 'done', 'done']);
    expect(list[0]!.links.self).toBe(`/v1/migrations/${list[0]!.id}`);
    const limited = await fetch(`${baseUrl}/v1/migrations?limit=1`, { headers: auth });
    expect(((await limited.json()) as MigrationBody[]).map((item) => item.id)).toEqual([
      list[0]!.id,
    ]);
    const anonymous = await fetch(`${baseUrl}/v1/migrations`);
    expect(anonymous.status).toBe(401);
  });

  it('drops from the list, and from its index, a migration whose keys have expired', async () => {
    const { redis, env } = pipeline.context;
    const index = `${env.PORTER_PREFIX}:migrations`;
    // newest of all, but its keys are gone
    await redis.zadd(index, Date.now() + 60_000, 'mig_expired');
    const answer = await fetch(`${baseUrl}/v1/migrations?limit=2`, { headers: auth });
    const list = (await answer.json()) as MigrationBody[];
    expect(list.map((item) => item.state)).toEqual(['failed', 'completed']);
    expect(await redis.zscore(index, 'mig_expired')).toBeNull();
  });
});
