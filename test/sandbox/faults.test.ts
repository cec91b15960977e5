/** Fault injection: each flag, made deterministic through the injectable `random` and clock. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, type Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { AdminNoAnswerError, classifyFailure } from '../../src/admin/errors.js';
import { isPorterError } from '../../src/errors/porter-error.js';
import { adminFailure, startTestSandbox, withSandbox } from '../helpers/sandbox.js';

const USERS = '/wf/restapi/v2/admin/userManager';

/** A `random` that replays the given values, then repeats the last one. */
function replay(...values: number[]): () => number {
  let next = 0;
  return () => values[Math.min(next++, values.length - 1)] ?? 0;
}

describe('faults', () => {
  it('--fail-rate: 503 UNAVAILABLE before anything is applied; the client calls it transient', async () => {
    await withSandbox(
      { faults: { failRate: 0.5 }, random: replay(0.2, 0.7) },
      async ({ client, store }) => {
        const error = await adminFailure(() => client.postUsers([{ username: 'ada' }]));
        expect(error).toMatchObject({
          status: 503,
          errorcode: 'UNAVAILABLE',
          code: 'ADMIN_UNAVAILABLE',
        });
        expect(classifyFailure(error)).toBe('transient');
        expect(store.counts().users).toBe(0);
        expect(await client.postUsers([{ username: 'ada' }])).toHaveLength(1);
        expect(store.stats.faults.failed).toBe(1);
      },
    );
  });

  it('--drop-rate: the request is applied, then the connection is destroyed unanswered (AdminNoAnswerError)', async () => {
    await withSandbox({ faults: { dropRate: 1 }, random: () => 0 }, async ({ client, store }) => {
      const error = await adminFailure(() =>
        client.postUsers([{ username: 'ada' }, { username: 'alan' }]),
      );
      expect(error).toBeInstanceOf(AdminNoAnswerError);
      expect(classifyFailure(error)).toBe('ambiguous');
      expect(store.userByName('ada')).toMatchObject({ userId: 1 });
      expect(store.userByName('alan')).toMatchObject({ userId: 2 });
      expect(store.stats.faults.dropped).toBe(1);
      // a dropped GET is no answer too, and a read changes nothing: transient
      const read = await adminFailure(() => client.listUsers());
      expect(read).toBeInstanceOf(AdminNoAnswerError);
      expect(classifyFailure(read)).toBe('transient');
      expect(store.stats.faults.dropped).toBe(2);
    });
  });

  it('--drop-rate drops only what was applied: a refused request is answered with its error', async () => {
    const options = { apiKey: 'key', faults: { dropRate: 1 }, random: () => 0 };
    await withSandbox(options, async ({ client, store, sandbox, url }) => {
      const noKey = new AdminClient({ baseUrl: url });
      try {
        expect(await adminFailure(() => noKey.postUsers([{ username: 'x' }]))).toMatchObject({
          status: 401,
          errorcode: 'UNAUTHORIZED',
        });
      } finally {
        await noKey.close();
      }
      sandbox.setFaults({ dropRate: 0 });
      await client.postUsers([{ username: 'taken' }]);
      sandbox.setFaults({ dropRate: 1 });
      const refusals: [() => Promise<unknown>, number, string][] = [
        [() => client.postUsers([{ username: 7 } as never]), 400, 'BAD_REQUEST'],
        [() => client.deleteUsers([{ username: 'nobody' }]), 404, 'NOT_FOUND'],
        [() => client.postUsers([{ username: 'a' }, { username: 'taken' }]), 409, 'ALREADY_EXISTS'],
      ];
      for (const [call, status, errorcode] of refusals) {
        expect(await adminFailure(call)).toMatchObject({ status, errorcode });
      }
      // a partial server applies the records before the failing one, and still answers the error
      sandbox.setFaults({ batchFailure: 'partial' });
      const partial = await adminFailure(() =>
        client.postUsers([{ username: 'b' }, { username: 'taken' }]),
      );
      expect(partial).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS', index: 1 });
      expect(store.users().map((user) => user.username)).toEqual(['taken', 'b']);
      expect(store.stats.faults.dropped).toBe(0);
    });
  });

  it('--batch-failure partial: records before the failing one are applied and saved, then the error answer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'porter-sandbox-'));
    const dataFile = join(dir, 'state.ndjson');
    try {
      const first = await startTestSandbox({ dataFile, faults: { batchFailure: 'partial' } });
      await first.client.postUsers([{ username: 'taken' }]);
      const error = await adminFailure(() =>
        first.client.postUsers([
          { username: 'a' },
          { username: 'b' },
          { username: 'taken' },
          { username: 'c' },
        ]),
      );
      expect(error).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS', index: 2 });
      expect(first.store.users().map((user) => user.username)).toEqual(['taken', 'a', 'b']);
      await first.close();
      const second = await startTestSandbox({ dataFile });
      expect(second.store.users().map((user) => user.username)).toEqual(['taken', 'a', 'b']);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--batch-failure omit: 200 with only the applied records; the failing ones are left out, unapplied', async () => {
    await withSandbox({ faults: { batchFailure: 'omit' } }, async ({ client, store }) => {
      await client.postUsers([{ username: 'taken' }]);
      const answer = await client.postUsers([
        { username: 'a' },
        { username: 'taken' },
        { username: 'b', groups: [987_654] },
        { username: 'c' },
      ]);
      expect(answer.map((user) => user.username)).toEqual(['a', 'c']);
      expect(store.users().map((user) => user.username)).toEqual(['taken', 'a', 'c']);
      // a skipped record leaves the draft as it was: a later record may take its name
      const again = await client.putUsers([{ username: 'd', type: 'Nobody' }, { username: 'd' }]);
      expect(again).toMatchObject([{ username: 'd' }]);
      // deletes too: the missing one is left out, the others are gone
      const deleted = await client.deleteUsers([{ username: 'nobody' }, { username: 'a' }]);
      expect(deleted.map((user) => user.username)).toEqual(['a']);
      expect(store.userByName('a')).toBeUndefined();
      expect(store.stats.refusals).toEqual({});
    });
  });

  it('--batch-failure atomic (the default): nothing of a failing request is applied', async () => {
    await withSandbox({}, async ({ client, store, sandbox }) => {
      expect(sandbox.faults().batchFailure).toBe('atomic');
      await client.postUsers([{ username: 'taken' }]);
      await adminFailure(() => client.postUsers([{ username: 'a' }, { username: 'taken' }]));
      expect(store.counts().users).toBe(1);
    });
  });

  it('--rate-limit: past N requests per second, 429 RATE_LIMITED with Retry-After (retryAfterMs)', async () => {
    let clock = 10_000;
    await withSandbox({ faults: { rateLimit: 2 }, now: () => clock }, async ({ client, store }) => {
      await client.listUsers();
      clock += 400;
      await client.postUsers([{ username: 'ada' }]);
      const error = await adminFailure(() => client.postUsers([{ username: 'alan' }]));
      expect(error).toMatchObject({ status: 429, errorcode: 'RATE_LIMITED', retryAfterMs: 1000 });
      expect(classifyFailure(error)).toBe('transient');
      expect(store.userByName('alan')).toBeUndefined();
      clock += 600; // the first request leaves the one-second window
      expect(await client.postUsers([{ username: 'alan' }])).toHaveLength(1);
      expect(store.stats.faults.rateLimited).toBe(1);
    });
  });

  it('--max-records: more records in one request is 413 TOO_MANY_RECORDS, nothing applied', async () => {
    await withSandbox({ faults: { maxRecords: 2 } }, async ({ client, store }) => {
      expect(await client.postUsers([{ username: 'a' }, { username: 'b' }])).toHaveLength(2);
      const error = await adminFailure(() =>
        client.postUsers([{ username: 'c' }, { username: 'd' }, { username: 'e' }]),
      );
      expect(error).toMatchObject({ status: 413, errorcode: 'TOO_MANY_RECORDS' });
      expect(error.index).toBeUndefined();
      expect(classifyFailure(error)).toBe('permanent');
      expect(store.counts().users).toBe(2);
    });
  });

  it('--latency: an answer is held for latencyMs after the change is applied; another request is answered meanwhile', async () => {
    const waits: number[] = [];
    let release: (() => void) | undefined;
    let heldStarted: () => void = () => {};
    const held = new Promise<void>((resolve) => (heldStarted = resolve));
    // The first wait is held until the test releases it; later ones end at once.
    const sleep = (ms: number): Promise<void> => {
      waits.push(ms);
      if (waits.length > 1) return Promise.resolve();
      heldStarted();
      return new Promise((resolve) => (release = resolve));
    };
    await withSandbox({ faults: { latencyMs: 60 }, sleep }, async ({ client, store, sandbox }) => {
      let answered = false;
      const first = client.postUsers([{ username: 'ada' }]).then((records) => {
        answered = true;
        return records;
      });
      await held;
      expect(store.userByName('ada')).toMatchObject({ userId: 1 });
      expect(await client.listUsers()).toHaveLength(1);
      expect(answered).toBe(false);
      release?.();
      expect(await first).toMatchObject([{ userId: 1, username: 'ada' }]);
      // error answers wait too, those refused before the body is read included
      await adminFailure(() => client.deleteUsers([{ username: 'nobody' }]));
      sandbox.setFaults({ failRate: 1 });
      expect(await adminFailure(() => client.listUsers())).toMatchObject({ status: 503 });
      expect(waits).toEqual([60, 60, 60, 60]);
      expect(store.stats.faults.delayed).toBe(4);
    });
  });

  it('--latency 0 (the default) never waits', async () => {
    const waits: number[] = [];
    const sleep = async (ms: number): Promise<void> => void waits.push(ms);
    await withSandbox({ sleep }, async ({ client, store }) => {
      await client.listUsers();
      expect(waits).toEqual([]);
      expect(store.stats.faults.delayed).toBe(0);
    });
  });

  it('order of checks: rate limit and injected failure come before the body is read', async () => {
    let clock = 10_000;
    const options = { apiKey: 'key', faults: { rateLimit: 1 }, now: () => clock };
    await withSandbox(options, async ({ url, sandbox, store }) => {
      const unreadable = (): Promise<Dispatcher.ResponseData> =>
        request(url + USERS, {
          method: 'POST',
          headers: { 'content-type': 'multipart/form-data; boundary=nope' },
          body: 'not multipart at all',
        });
      // the body alone: 400, before the credentials are looked at
      const first = await unreadable();
      expect(first.statusCode).toBe(400);
      expect(await first.body.json()).toMatchObject({ errorcode: 'BAD_REQUEST' });
      // past the rate limit: 429, the body never read
      const limited = await unreadable();
      expect(limited.statusCode).toBe(429);
      expect(await limited.body.json()).toMatchObject({ errorcode: 'RATE_LIMITED' });
      clock += 1_000;
      // an injected failure: 503, the body never read, whatever its type
      sandbox.setFaults({ rateLimit: 0, failRate: 1 });
      const failed = await request(url + USERS, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'users=[]',
      });
      expect(failed.statusCode).toBe(503);
      expect(await failed.body.json()).toMatchObject({ errorcode: 'UNAVAILABLE' });
      expect(store.stats.faults).toMatchObject({ rateLimited: 1, failed: 1 });
    });
  });

  it('order of checks: credentials come after the body is read (user/pass may be form fields), before the records', async () => {
    const options = { user: 'admin', password: 'secret' };
    await withSandbox(options, async ({ url, store }) => {
      const post = (fields: Record<string, string>): Promise<Dispatcher.ResponseData> =>
        request(url + USERS, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(fields).toString(),
        });
      const wrong = await post({ users: 'not json', user: 'admin', pass: 'wrong' });
      expect(wrong.statusCode).toBe(401);
      await wrong.body.dump();
      const right = await post({ users: 'not json', user: 'admin', pass: 'secret' });
      expect(right.statusCode).toBe(400);
      await right.body.dump();
      const created = await post({ users: '[{"username":"ada"}]', user: 'admin', pass: 'secret' });
      expect(created.statusCode).toBe(200);
      await created.body.dump();
      expect(store.counts().users).toBe(1);
    });
  });

  it('setFaults changes faults at run time, and refuses bad values', async () => {
    await withSandbox({ random: () => 0 }, async ({ client, sandbox, store }) => {
      await client.postUsers([{ username: 'a' }]);
      sandbox.setFaults({ failRate: 1 });
      await adminFailure(() => client.postUsers([{ username: 'b' }]));
      sandbox.setFaults({ failRate: 0, maxRecords: 1 });
      expect(sandbox.faults()).toMatchObject({
        failRate: 0,
        maxRecords: 1,
        batchFailure: 'atomic',
      });
      expect(await client.postUsers([{ username: 'b' }])).toHaveLength(1);
      expect(store.counts().users).toBe(2);
      let refused: unknown;
      try {
        sandbox.setFaults({ dropRate: 2 });
      } catch (error) {
        refused = error;
      }
      expect(isPorterError(refused) && refused.code).toBe('PORTER_USAGE');
    });
  });

  it('draws from random only for rates above 0: failRate first, then dropRate', async () => {
    const draws: number[] = [];
    const random = (): number => {
      draws.push(draws.length);
      return 0.9;
    };
    await withSandbox({ faults: { dropRate: 0.5 }, random }, async ({ client, sandbox }) => {
      await client.listUsers();
      expect(draws).toHaveLength(1);
      sandbox.setFaults({ failRate: 0.5 });
      await client.listUsers();
      expect(draws).toHaveLength(3);
    });
  });
});
