/**
 * A read that breaks off mid-answer starts its file over (never a record twice), a refused
 * read is not retried, and a late group (created after the groups were read) is looked up.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnswerDecoder } from '../../src/admin/answer-decoder.js';
import type { ResourceName } from '../../src/admin/resources.js';
import { AdminHttpError, AdminNoAnswerError } from '../../src/admin/errors.js';
import { runExport, type ExportRunDeps } from '../../src/export/export-run.js';

const info = { method: 'GET', path: '/wf/restapi/v2/admin/userManager' };
const RETRY = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
let outDir: string;

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'porter-retry-'));
});
afterAll(async () => rm(outDir, { recursive: true, force: true }));

const GROUPS = [
  { id: 1, name: 'Editors' },
  { id: 2, name: 'Viewers' },
];
const USERS = Array.from({ length: 10 }, (_, index) => ({
  userId: index + 1,
  username: `user${index + 1}`,
  groups: [1 + (index % 2)],
}));

/** A client over fixed records whose users answer runs `plan` per attempt. */
function fakeClient(
  usersPlan: ((attempt: number) => Error | undefined)[],
  extra: { lateGroup?: { id: number; name: string } } = {},
): ExportRunDeps['client'] & { calls: string[] } {
  const calls: string[] = [];
  let userAttempts = 0;
  // one record per batch, as a slow answer would come
  async function* streamBatches(resource: ResourceName) {
    calls.push(`stream ${resource}`);
    if (resource === 'groups') yield GROUPS;
    if (resource === 'users') {
      const attempt = userAttempts++;
      const failure = usersPlan[attempt]?.(attempt);
      for (const [index, user] of USERS.entries()) {
        if (failure && index === 4) throw failure;
        yield [index === 9 && extra.lateGroup ? { ...user, groups: [extra.lateGroup.id] } : user];
      }
    }
  }
  return {
    baseUrl: 'http://fake.example',
    calls,
    streamBatches,
    // the same records as the bytes of one JSON array, a record per chunk
    async *streamDecoded(
      resource: ResourceName,
      query: Record<string, unknown>,
      signal: AbortSignal | undefined,
      makeDecoder: (info: { method: string; path: string }) => AnswerDecoder<unknown>,
    ) {
      const decoder = makeDecoder(info);
      let first = true;
      const feed = function* (text: string) {
        const decoded = decoder.write(Buffer.from(text));
        if (decoded.value !== undefined) yield decoded.value;
        if (decoded.fault !== undefined) throw decoded.fault;
      };
      yield* feed('[');
      for await (const batch of streamBatches(resource)) {
        for (const record of batch) {
          yield* feed(`${first ? '' : ','}${JSON.stringify(record)}`);
          first = false;
        }
      }
      yield* feed(']');
      decoder.end();
    },
    async get(resource: ResourceName, query: Record<string, unknown> = {}) {
      calls.push(`get ${resource} ${JSON.stringify(query)}`);
      return extra.lateGroup && query.id === extra.lateGroup.id ? [extra.lateGroup] : [];
    },
  } as unknown as ExportRunDeps['client'] & { calls: string[] };
}

describe('retries of an export read', () => {
  it('a users answer that breaks off after 4 records starts users.csv over: 10 rows, none twice', async () => {
    const client = fakeClient([() => new AdminNoAnswerError('broke off', info)]);
    const retries: string[] = [];
    const dir = join(outDir, 'broke-off');
    const manifest = await runExport(
      {
        id: 'exp_20260101T000000000Z_aaaaaa',
        request: { resource: 'users', format: 'csv', outDir },
        dir,
      },
      { client, retry: RETRY, onRetry: (_error, _delay, step) => void retries.push(step) },
    );
    expect(retries).toEqual(['users.csv']);
    expect(manifest.counts).toEqual({ users: 10 });
    const lines = (await readFile(join(dir, 'users.csv'), 'utf8')).trimEnd().split('\n');
    expect(lines.slice(1).map((line) => line.split(',')[1])).toEqual(USERS.map((u) => u.username));
    expect(await readdir(dir)).toEqual(expect.arrayContaining(['manifest.json', 'users.csv']));
    expect((await readdir(dir)).length).toBe(2);
  });

  it('a refusal (400) is not retried; the run fails and leaves nothing', async () => {
    const refusal = new AdminHttpError('bad request', { ...info, status: 400 });
    const client = fakeClient([() => refusal, () => undefined]);
    const dir = join(outDir, 'refused');
    await expect(
      runExport(
        {
          id: 'exp_20260101T000000000Z_bbbbbb',
          request: { resource: 'all', format: 'csv', outDir },
          dir,
        },
        { client, retry: RETRY },
      ),
    ).rejects.toMatchObject({ code: 'PORTER_EXPORT_FAILED', cause: refusal });
    expect(client.calls.filter((call) => call === 'stream users')).toHaveLength(1);
    await expect(readdir(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a group created after the groups were read is looked up by id and named', async () => {
    const client = fakeClient([], { lateGroup: { id: 7, name: 'Newcomers' } });
    const dir = join(outDir, 'late');
    const manifest = await runExport(
      {
        id: 'exp_20260101T000000000Z_cccccc',
        request: { resource: 'users', format: 'ndjson', outDir },
        dir,
      },
      { client, retry: RETRY },
    );
    const last = (await readFile(join(dir, 'users.ndjson'), 'utf8')).trimEnd().split('\n').at(-1)!;
    expect(JSON.parse(last)).toMatchObject({ username: 'user10', groups: ['Newcomers'] });
    expect(client.calls.filter((call) => call.startsWith('get groups'))).toEqual([
      'get groups {"id":7}',
    ]);
    expect(manifest.consistency.groupsChanged).toBe(false);
  });

  it('in a CSV too, a late group is looked up once and named, the other rows kept as read', async () => {
    const client = fakeClient([], { lateGroup: { id: 7, name: 'Newcomers' } });
    const dir = join(outDir, 'late-csv');
    const manifest = await runExport(
      {
        id: 'exp_20260101T000000000Z_dddddd',
        request: { resource: 'users', format: 'csv', outDir },
        dir,
      },
      { client, retry: RETRY },
    );
    const lines = (await readFile(join(dir, 'users.csv'), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(11);
    const groupsCell = (line: string) => line.split(',')[20];
    expect(lines.slice(1, 10).map(groupsCell)).toEqual(
      USERS.slice(0, 9).map((user) => (user.groups[0] === 1 ? 'Editors' : 'Viewers')),
    );
    expect(groupsCell(lines[10]!)).toBe('Newcomers');
    expect(client.calls.filter((call) => call.startsWith('get groups'))).toEqual([
      'get groups {"id":7}',
    ]);
    expect(manifest.counts).toEqual({ users: 10 });
  });
});
