/**
 * `porter api` killed (SIGKILL) in the middle of a burst of SCIM creates and started again:
 * every request is answered with its result, a retryable status, or a broken connection; the
 * identity provider sends those again to the new process (a create whose answer was lost is
 * 409, and the provider finds the user and sends it whole), and the DAM holds each user once,
 * with what was sent for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { spawnApi, type ApiProcess } from '../helpers/api-process.js';
import { waitFor } from '../helpers/redis.js';

const BURST = 100;
let pipeline: Pipeline;
let token: string;
const apis: ApiProcess[] = [];

type Outcome = { status: number; retryAfter: string | null; body: unknown } | { broken: string };

const userOf = (index: number): Record<string, unknown> => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName: `burst.${index}@example.com`,
  externalId: `oid-${index}`,
  displayName: `Burst ${index}`,
  name: { givenName: 'Burst', familyName: `Number ${index}` },
  active: true,
});

async function post(base: string, index: number): Promise<Outcome> {
  try {
    const response = await fetch(`${base}/scim/v2/default/Users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
      body: JSON.stringify(userOf(index)),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: text ? (JSON.parse(text) as unknown) : undefined,
    };
  } catch (error) {
    return { broken: String((error as Error).cause ?? error) };
  }
}

/** The provider's recovery from 409 on its own create: the user found by filter, then PUT. */
async function replaceFound(base: string, index: number): Promise<number> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
  const user = userOf(index);
  const filter = encodeURIComponent(`userName eq "${String(user.userName)}"`);
  const found = await fetch(`${base}/scim/v2/default/Users?filter=${filter}`, { headers });
  const list = (await found.json()) as { Resources: Array<{ id: string }> };
  expect(list.Resources).toHaveLength(1);
  const replaced = await fetch(`${base}/scim/v2/default/Users/${list.Resources[0]!.id}`, {
    method: 'PUT',
    headers,
    body: JSON.stringify(user),
  });
  await replaced.text();
  return replaced.status;
}

/** What an identity provider does with an answer: done, or send it again. */
function retryable(outcome: Outcome): boolean {
  if ('broken' in outcome) return true;
  return (outcome.status === 503 || outcome.status === 429) && Number(outcome.retryAfter) > 0;
}

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  const made = { at: new Date().toISOString(), actionId: 'setup', who: { name: 'test' } };
  token = (
    await securityOf(pipeline.context).tokens.create(
      { name: 'entra', role: 'operator', targets: ['default'], scimOnly: true },
      made,
    )
  ).token;
});

afterAll(async () => {
  for (const api of apis) {
    if (api.child.exitCode === null && api.child.signalCode === null) api.child.kill();
    await api.exited;
  }
  await pipeline?.close();
});

describe('the API killed in the middle of a SCIM burst', () => {
  it('answers each request with its result or a retryable status; after the retries each user is there once', async () => {
    const env = { ...pipeline.childEnv(), PORTER_API_TOKEN: 'scim-restart-api-token-0123456789' };
    const first = await spawnApi(env);
    apis.push(first);
    const base = await first.listening;
    // answers leave the DAM late: some creates are applied and never answered
    pipeline.sandbox.setFaults({ latencyMs: 40 });

    const burst = Array.from({ length: BURST }, (_, index) => post(base, index));
    await waitFor(
      async () => (pipeline.sandbox.store.counts().users >= BURST / 4 ? true : undefined),
      { what: 'a quarter of the burst to reach the DAM', timeoutMs: 30_000 },
    );
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    const outcomes = await Promise.all(burst);

    const done = outcomes.filter((outcome) => 'status' in outcome && outcome.status === 201);
    const again = outcomes.flatMap((outcome, index) => (retryable(outcome) ? [index] : []));
    const other = outcomes.filter(
      (outcome) => !retryable(outcome) && !('status' in outcome && outcome.status === 201),
    );
    expect(other).toEqual([]);
    expect(done.length + again.length).toBe(BURST);
    expect(again.length).toBeGreaterThan(0);

    const second = await spawnApi(env);
    apis.push(second);
    const base2 = await second.listening;
    for (let round = 0; round < 3 && again.length > 0; round++) {
      const retried = await Promise.all(again.map((index) => post(base2, index)));
      const left = again.filter((_, at) => retryable(retried[at]!));
      for (const [at, outcome] of retried.entries()) {
        if (retryable(outcome)) continue;
        if ('status' in outcome && outcome.status === 409) {
          // a create the DAM applied before the kill, its answer lost: 409 uniqueness, as RFC
          // 7644 says; the provider then finds the user by filter and sends it whole, as Entra
          // and Okta do
          expect(outcome.body, `retry of ${again[at]}`).toMatchObject({ scimType: 'uniqueness' });
          expect(await replaceFound(base2, again[at]!), `PUT of ${again[at]}`).toBe(200);
          continue;
        }
        expect(outcome, `retry of ${again[at]}`).toMatchObject({ status: 201 });
      }
      again.splice(0, again.length, ...left);
    }
    expect(again).toEqual([]);

    // each user once, with what the provider sent for it
    const users = pipeline.sandbox.store.users();
    for (let index = 0; index < BURST; index++) {
      const name = `burst.${index}@example.com`;
      const held = users.filter((user) => user.username?.toLowerCase() === name);
      expect(held, name).toHaveLength(1);
    }
    expect(users.filter((user) => user.username?.startsWith('burst.'))).toHaveLength(BURST);
    const listed = await fetch(
      `${base2}/scim/v2/default/Users?filter=${encodeURIComponent('displayName sw "Burst "')}&count=1000`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(((await listed.json()) as { totalResults: number }).totalResults).toBe(BURST);
  }, 120_000);
});
