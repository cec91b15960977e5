/**
 * SCIM user updates that arrive together go to the DAM together (src/app/scim-update-gather.ts),
 * and so do the reads before them (src/app/scim-read-gather.ts); writes of one resource go one
 * at a time (src/app/scim.ts): over real HTTP against the
 * sandbox. Each PATCH is answered with its own user as a read then shows it; two PATCHes of one
 * user or one group at once both hold; a batch the DAM refuses in any of its ways ends with each
 * update answered once, the good ones applied and the bad one failed alone. The window is long
 * here (1 s) so that the requests of a test share it however slowly the machine takes them in.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UserRecord } from '../../src/admin/schemas.js';
import { UserUpdateGatherer } from '../../src/app/scim-update-gather.js';
import type { BatchFailure } from '../../src/sandbox/options.js';
import type { Pipeline } from '../helpers/pipeline.js';
import { startScimApi, type ScimApi } from '../helpers/scim-api.js';

const API_TOKEN = 'gathered-updates-token-0123456789';
let api: ScimApi;
let pipeline: Pipeline;

const scim: ScimApi['scim'] = (method, path, body) => api.scim(method, path, body);

const replace = (path: string, value: unknown) => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'replace', path, value }],
});

async function createUsers(prefix: string, count: number): Promise<string[]> {
  const client = pipeline.context.createAdminClient();
  try {
    const created = await client.postUsers(
      Array.from({ length: count }, (_, index) => ({ username: `${prefix}.${index}` })),
    );
    return created.map((user) => String(user.userId));
  } finally {
    await client.close();
  }
}

const puts = (): number => pipeline.sandbox.store.stats.writes.users.PUT;

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
  pipeline.sandbox.setFaults({ batchFailure: 'atomic', latencyMs: 0 });
});

describe('SCIM updates gathered into multi-record calls', () => {
  it('30 PATCHes at once: each answered with its own user, in a few calls', async () => {
    const ids = await createUsers('mover', 30);
    // a list of the users tells porter the target's size: beside it, 30 reads are many, and
    // go as one read of them all
    expect((await scim('GET', '/Users?count=1')).status).toBe(200);
    // the DAM takes its time: the reads that arrive while the first is out go together
    pipeline.sandbox.setFaults({ latencyMs: 300 });
    const before = puts();
    const readsBefore = pipeline.sandbox.store.stats.requests.GET;
    const answers = await Promise.all(
      ids.map((id, index) => scim('PATCH', `/Users/${id}`, replace('title', `Role ${index}`))),
    );
    const calls = puts() - before;
    pipeline.sandbox.setFaults({ latencyMs: 0 });
    // the reads each PATCH starts with are gathered too (src/app/scim-read-gather.ts)
    expect(pipeline.sandbox.store.stats.requests.GET - readsBefore).toBeLessThanOrEqual(4);
    // answered 204 with the new version, as Entra and Okta expect of a PATCH
    expect(answers.map((answer) => answer.status)).toEqual(ids.map(() => 204));
    // two full calls of 25 at best; never one per request
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(calls).toBeLessThanOrEqual(4);
    // each holds its own change, and the version answered is the one a read shows
    for (const [index, id] of ids.entries()) {
      const read = await scim('GET', `/Users/${id}`);
      expect(read.body.title).toBe(`Role ${index}`);
      expect(read.headers.get('etag')).toBe(answers[index]!.headers.get('etag'));
    }
    // each change is kept once in the hour's journal
    const journals = await pipeline.context.store.listPage({ source: 'scim' });
    const kept = await pipeline.results(journals.imports[0]!.id);
    expect(kept.filter((result) => result.action === 'update')).toHaveLength(30);
  });

  it('two PATCHes of one user at once: both changes hold', async () => {
    const [id] = await createUsers('both', 1);
    const answers = await Promise.all([
      scim('PATCH', `/Users/${id}`, replace('title', 'Engineer')),
      scim('PATCH', `/Users/${id}`, replace('name.familyName', 'Hopper')),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([204, 204]);
    const read = await scim('GET', `/Users/${id}`);
    expect(read.body.name.familyName).toBe('Hopper');
    expect(read.body.title).toBe('Engineer');
    expect(pipeline.sandbox.store.getUser(Number(id))?.lastName).toBe('Hopper');
  });

  it('ten member PATCHes of one group at once, as Entra sends them: every member is kept', async () => {
    const ids = await createUsers('member', 10);
    const group = await scim('POST', '/Groups', { displayName: 'Gathered Crew' });
    expect(group.status).toBe(201);
    const answers = await Promise.all(
      ids.map((id) =>
        scim('PATCH', `/Groups/${group.body.id}`, {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [{ op: 'Add', path: 'members', value: [{ value: id }] }],
        }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(ids.map(() => 204));
    const read = await scim('GET', `/Groups/${group.body.id}`);
    const members = (read.body.members as Array<{ value: string }>).map((member) => member.value);
    expect(members.sort()).toEqual([...ids].sort());
  });
});

describe('a batch of updates the DAM refuses', () => {
  for (const batchFailure of ['atomic', 'partial', 'omit'] as BatchFailure[]) {
    it(`(${batchFailure}): the good updates applied, the bad one failed alone, each answered once`, async () => {
      pipeline.sandbox.setFaults({ batchFailure });
      const ids = (await createUsers(`refused.${batchFailure}`, 3)).map(Number);
      const client = pipeline.context.createAdminClient();
      // the middle user goes before its update is sent: the DAM refuses that record
      await client.deleteUsers([{ userId: ids[1]! }]);
      const gatherer = new UserUpdateGatherer(client, { windowMs: 1000, maxBatch: 25 });
      try {
        const outcomes = await Promise.allSettled(
          ids.map((userId, index) =>
            gatherer.update({
              userId,
              username: `refused.${batchFailure}.${index}`,
              dept: `Dept ${index}`,
            } as UserRecord & { userId: number }),
          ),
        );
        expect(outcomes.map((outcome) => outcome.status)).toEqual([
          'fulfilled',
          'rejected',
          'fulfilled',
        ]);
        expect((outcomes[0] as PromiseFulfilledResult<UserRecord>).value.dept).toBe('Dept 0');
        expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(
          /no user with userId|did not apply/,
        );
        expect(pipeline.sandbox.store.getUser(ids[0]!)?.dept).toBe('Dept 0');
        expect(pipeline.sandbox.store.getUser(ids[2]!)?.dept).toBe('Dept 2');
        expect(pipeline.sandbox.store.getUser(ids[1]!)).toBeUndefined();
      } finally {
        await client.close();
      }
    });
  }
});
