/**
 * SCIM user creates that arrive together go to the DAM together (src/app/scim-gather.ts), over
 * real HTTP against the sandbox: each request is answered with its own user, look-alikes in one
 * window are refused, and a batch the DAM refuses in any of its ways (nothing applied, the
 * records before the bad one applied, the bad one left out) ends with each record answered
 * once and each user held once. The window is long here (1 s) so that the requests of a test
 * share it however slowly the machine takes them in.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BatchFailure } from '../../src/sandbox/options.js';
import type { Pipeline } from '../helpers/pipeline.js';
import { startScimApi, type ScimApi } from '../helpers/scim-api.js';

const API_TOKEN = 'gathered-scim-token-0123456789';
let api: ScimApi;
let pipeline: Pipeline;

const scim: ScimApi['scim'] = (method, path, body) => api.scim(method, path, body);

const create = (userName: string) =>
  scim('POST', '/Users', {
    userName,
    name: { givenName: 'Ada', familyName: userName },
    emails: [{ value: `${userName}@example.com`, primary: true }],
  });

function held(name: string): number {
  return [...pipeline.sandbox.store.allUsers()].filter((user) => user.username === name).length;
}

beforeAll(async () => {
  api = await startScimApi(API_TOKEN, {
    env: { PORTER_SCIM_WINDOW_MS: '1000', PORTER_SCIM_MAX_BATCH: '25' },
  });
  pipeline = api.pipeline;
});

afterAll(async () => {
  await api?.close();
});

beforeEach(() => {
  pipeline.sandbox.setFaults({ batchFailure: 'atomic' });
});

describe('SCIM creates gathered into multi-record calls', () => {
  it('50 creates at once: each answered with its own user, in a few calls', async () => {
    const before = pipeline.sandbox.store.stats.writes.users.POST;
    const names = Array.from({ length: 50 }, (_, index) => `hire.${index}`);
    const answers = await Promise.all(names.map(create));
    const posts = pipeline.sandbox.store.stats.writes.users.POST - before;
    expect(answers.map((answer) => answer.status)).toEqual(names.map(() => 201));
    expect(answers.map((answer) => answer.body.userName)).toEqual(names);
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(50);
    // two full calls of 25 at best; never one per request
    expect(posts).toBeGreaterThanOrEqual(2);
    expect(posts).toBeLessThanOrEqual(4);
    for (const name of names) expect(held(name)).toBe(1);
    // all fifty are kept in one journal (src/app/scim-journal.ts), each once
    const journals = await pipeline.context.store.listPage({ source: 'scim' });
    expect(journals.imports).toHaveLength(1);
    const kept = (await pipeline.results(journals.imports[0]!.id)).map((result) => result.key);
    expect(kept.sort()).toEqual([...names].sort());
    // the answer is the user as a read shows it, version included
    const read = await scim('GET', `/Users/${answers[7]!.body.id}`);
    expect(read.body).toEqual(answers[7]!.body);
  });

  it('look-alike names in one window: one is created, the others refused as uniqueness', async () => {
    const answers = await Promise.all(['eve.k', 'EVE.K', '\u0435ve.k', 'eve.k '].map(create));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409]);
    for (const answer of answers.filter((one) => one.status === 409))
      expect(answer.body.scimType).toBe('uniqueness');
    const eves = [...pipeline.sandbox.store.allUsers()].filter((user) =>
      /^(eve\.k|EVE\.K|\u0435ve\.k|eve\.k )$/.test(user.username ?? ''),
    );
    expect(eves).toHaveLength(1);
  });

  it('a name deleted or renamed away through SCIM can be created again at once', async () => {
    const first = await create('rehire.r');
    expect(first.status).toBe(201);
    expect((await scim('DELETE', `/Users/${first.body.id}`)).status).toBe(204);
    expect((await create('rehire.r')).status).toBe(201);
    const renamed = await create('old.name');
    const patched = await scim('PATCH', `/Users/${renamed.body.id}`, {
      Operations: [{ op: 'replace', path: 'userName', value: 'new.name' }],
    });
    expect([200, 204]).toContain(patched.status);
    expect((await create('old.name')).status).toBe(201);
  });

  for (const batchFailure of ['atomic', 'partial', 'omit'] as BatchFailure[]) {
    it(`a batch the DAM refuses (${batchFailure}): each record answered once, each user held once`, async () => {
      pipeline.sandbox.setFaults({ batchFailure });
      const taken = `taken.${batchFailure}`;
      const names = [`first.${batchFailure}`, taken, `last.${batchFailure}`];
      // the names are read (and kept a few seconds); then another client takes one of them,
      // which the DAM refuses in the batch
      expect((await create(`before.${batchFailure}`)).status).toBe(201);
      const other = pipeline.context.createAdminClient();
      await other.postUsers([{ username: taken, email: 'other@example.com' }]);
      await other.close();
      const pending = Promise.all(names.map(create));
      const [first, refused, last] = await pending;
      expect(first!.status, JSON.stringify(first!.body)).toBe(201);
      expect(last!.status, JSON.stringify(last!.body)).toBe(201);
      // the name another took meanwhile: uniqueness, as a provider expects
      expect(refused!.status, JSON.stringify(refused!.body)).toBe(409);
      expect(refused!.body.scimType).toBe('uniqueness');
      for (const name of names) expect(held(name)).toBe(1);
      expect(
        [...pipeline.sandbox.store.allUsers()].find((user) => user.username === taken)?.email,
      ).toBe('other@example.com');
    });
  }
});
