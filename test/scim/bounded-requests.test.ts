/* eslint-disable @typescript-eslint/no-explicit-any -- SCIM answers are read as the JSON they are */
/**
 * Work per SCIM request is bounded: an oversized or deeply nested filter, paging out of range,
 * a PATCH of 100,000 operations, a /Bulk over ServiceProviderConfig's maxOperations or
 * maxPayloadSize, a body nested 100,000 deep. Each is answered at once with a SCIM error body
 * (never a stack, never a 500), over real HTTP against the sandbox, and the API answers after.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const API_TOKEN = 'bounded-scim-token-0123456789';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
/** Far more than any of these takes when bounded; a hang or a quadratic walk takes longer. */
const QUICK_MS = 5_000;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let config: any;

async function scim(
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  const response = await fetch(`${baseUrl}/scim/v2/default${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
    },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    ms: Date.now() - started,
  };
}

function expectScimError(
  answer: { status: number; body: any; ms: number },
  status: number,
  scimType?: string,
  quickMs = QUICK_MS,
): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.schemas).toEqual([ERROR_SCHEMA]);
  if (scimType) expect(answer.body.scimType).toBe(scimType);
  expect(JSON.stringify(answer.body)).not.toMatch(/\n\s+at |RangeError|stack/);
  expect(answer.ms).toBeLessThan(quickMs);
}

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  config = (await scim('GET', '/ServiceProviderConfig')).body;
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

const filter = (text: string): string => `/Users?filter=${encodeURIComponent(text)}`;

describe('bounded SCIM requests', () => {
  it('filters: 100 KB, 10,000 parentheses, 5,000 `or` terms are refused before any work', async () => {
    // past Node's 16 KB header limit the HTTP parser refuses the request line itself (431)
    for (const text of [
      `userName eq "${'a'.repeat(100_000)}"`,
      `${'('.repeat(10_000)}userName pr${')'.repeat(10_000)}`,
      Array.from({ length: 5_000 }, () => 'id pr').join(' or '),
    ]) {
      const answer = await fetch(`${baseUrl}/scim/v2/default${filter(text)}`, {
        headers: { authorization: `Bearer ${API_TOKEN}` },
      });
      expect(answer.status).toBe(431);
    }
    // within it, porter's own limit on a filter's length
    for (const text of [
      `userName eq "${'a'.repeat(10_000)}"`,
      `${'('.repeat(2_100)}userName pr${')'.repeat(2_100)}`,
      Array.from({ length: 1_000 }, () => 'id pr').join(' or '),
    ]) {
      expectScimError(await scim('GET', filter(text)), 400, 'invalidFilter');
    }
    const terms = Array.from({ length: 33 }, (_, index) => `userName co "${index}"`);
    expectScimError(await scim('GET', filter(terms.join(' or '))), 400, 'invalidFilter');
    expect((await scim('GET', filter(terms.slice(1).join(' or ')))).status).toBe(200);
    // the deepest a filter within the length limit can nest still parses and answers
    const nested = await scim('GET', filter(`${'('.repeat(2_000)}userName pr${')'.repeat(2_000)}`));
    expect(nested.status).toBe(200);
  });

  it('paging: a count of a billion is capped at the page size; a negative startIndex is 1', async () => {
    const billion = await scim('GET', '/Users?count=1000000000&startIndex=-5');
    expect(billion.status, JSON.stringify(billion.body)).toBe(200);
    expect(billion.body.startIndex).toBe(1);
    const far = await scim('GET', '/Users?startIndex=999999999999999');
    expect(far.status).toBe(200);
    expect(far.body).toMatchObject({ startIndex: 999999999999999, Resources: [] });
    expectScimError(await scim('GET', `/Users?count=${'9'.repeat(400)}`), 400, 'invalidValue');
  });

  it('a PATCH of 100,000 operations is refused as tooMany', async () => {
    const operations = Array.from({ length: 100_000 }, () => ({
      op: 'add',
      path: 'title',
      value: 'x',
    }));
    expectScimError(
      await scim('PATCH', '/Users/1', JSON.stringify({ Operations: operations })),
      400,
      'tooMany',
    );
  });

  it('a PATCH that would walk a long member list once per operation is refused as tooMany, at once', async () => {
    const group = await scim('POST', '/Groups', JSON.stringify({ displayName: 'Crowd' }));
    expect(group.status).toBe(201);
    const members = Array.from({ length: 200_000 }, (_, index) => ({ value: String(index) }));
    const removes = Array.from({ length: 999 }, (_, index) => ({
      op: 'remove',
      path: `members[value eq "${index}"]`,
    }));
    const adds = Array.from({ length: 1_000 }, (_, op) => ({
      op: 'add',
      path: 'members',
      value: members.slice(op * 200, op * 200 + 200),
    }));
    for (const operations of [[{ op: 'add', path: 'members', value: members }, ...removes], adds]) {
      const body = JSON.stringify({ Operations: operations });
      expect(body.length).toBeLessThan(config.bulk.maxPayloadSize);
      // reading 3.7 MB of JSON takes its own time on a loaded machine; unbounded, over a minute
      expectScimError(
        await scim('PATCH', `/Groups/${group.body.id}`, body),
        400,
        'tooMany',
        3 * QUICK_MS,
      );
    }
  });

  it("a /Bulk's PATCH operations share one PATCH's work limit", async () => {
    const admin = pipeline.context.createAdminClient();
    const users = await admin.postUsers(
      Array.from({ length: 5_000 }, (_, index) => ({ username: `member.${index}` })),
    );
    const [group] = await admin.postGroups([
      { name: 'Everyone', users: users.map((user) => user.userId!) },
    ]);
    await admin.close();
    // each walks the 5,000 members 20 times: 100,000 values, one twentieth of the limit
    const patch = {
      Operations: Array.from({ length: 20 }, (_, index) => ({
        op: 'remove',
        path: `members[value eq "absent-${index}"]`,
      })),
    };
    const operations = Array.from({ length: 30 }, () => ({
      method: 'PATCH',
      path: `/Groups/${group!.id}`,
      data: patch,
    }));
    const answer = await scim('POST', '/Bulk', JSON.stringify({ Operations: operations }));
    expect(answer.status).toBe(200);
    const statuses = answer.body.Operations.map((op: any) => op.response?.scimType ?? op.status);
    expect(statuses.slice(0, 19)).toEqual(Array.from({ length: 19 }, () => '204'));
    expect(statuses.slice(20)).toEqual(Array.from({ length: 10 }, () => 'tooMany'));
  });

  it('a /Bulk over maxOperations is 413 tooMany, naming maxOperations', async () => {
    const max = config.bulk.maxOperations as number;
    const operations = Array.from({ length: max + 1 }, () => ({
      method: 'DELETE',
      path: '/Users/999999',
    }));
    const answer = await scim('POST', '/Bulk', JSON.stringify({ Operations: operations }));
    expectScimError(answer, 413, 'tooMany');
    expect(answer.body.detail).toContain('maxOperations');
  });

  it('a body over maxPayloadSize is 413 tooMany naming it, for application/scim+json and application/json', async () => {
    const max = config.bulk.maxPayloadSize as number;
    const body = JSON.stringify({
      Operations: [
        { method: 'POST', path: '/Users', data: { userName: 'big', title: 'a'.repeat(max) } },
      ],
    });
    const answer = await scim('POST', '/Bulk', body);
    expectScimError(answer, 413, 'tooMany');
    expect(answer.body.detail).toContain(`maxPayloadSize (${max} bytes)`);
    const asJson = await fetch(`${baseUrl}/scim/v2/default/Users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
      body,
    });
    expect(asJson.status).toBe(413);
    expect(((await asJson.json()) as any).scimType).toBe('tooMany');
  });

  it('a body nested 100,000 deep is refused as invalidSyntax, in a resource, a PATCH and a /Bulk', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const bodies: Array<[string, string, string]> = [
      ['POST', '/Users', `{"userName":"deep","title":${deep}}`],
      [
        'PATCH',
        '/Users/1',
        `{"Operations":[{"op":"add","path":"name","value":{"givenName":${deep}}}]}`,
      ],
      [
        'POST',
        '/Bulk',
        `{"Operations":[{"method":"POST","path":"/Users","bulkId":"a","data":{"userName":"deep","x":${deep}}}]}`,
      ],
    ];
    for (const [method, path, body] of bodies) {
      expectScimError(await scim(method, path, body), 400, 'invalidSyntax');
    }
    // brackets inside a text are not nesting
    const text = await scim(
      'POST',
      '/Users',
      JSON.stringify({ userName: 'brackets', title: '['.repeat(5_000) }),
    );
    expect(text.status).not.toBe(500);
    expect([...pipeline.sandbox.store.allUsers()].map((user) => user.username)).not.toContain(
      'deep',
    );
  });

  it('the API still answers after all of them', async () => {
    const health = await fetch(`${baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect((await scim('GET', '/Users?count=1')).status).toBe(200);
  });
});
