/**
 * Whole or nothing on disk: while an answer is still arriving, its records are in a temporary
 * file and the final name does not exist; it appears, complete, with the rename. A temporary
 * file a dead attempt left behind is removed when the run is tried again.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { runExport } from '../../src/export/export-run.js';
import { waitFor } from '../helpers/redis.js';

const RETRY = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 5 };
const TEMP_NAME = /^\.users\.ndjson\.[0-9a-f]{12}\.porter-tmp$/;
const GROUPS = [{ id: 1, name: 'Editors' }];
const USERS = Array.from({ length: 4_000 }, (_, index) => ({
  userId: index + 1,
  username: `user${index + 1}`,
  email: `user${index + 1}@example.com`,
  groups: [1],
}));
const HALF = USERS.length / 2;

let server: Server;
let client: AdminClient;
let outDir: string;
/** Ends the users answer that is held after its first half. */
let releaseUsers: (() => void) | undefined;

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'porter-atomic-'));
  server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    if (!request.url?.includes('userManager')) {
      response.end(JSON.stringify(GROUPS));
      return;
    }
    // the first half of the array, then nothing until the test lets the rest go
    const text = (users: typeof USERS): string =>
      users.map((user) => JSON.stringify(user)).join(',');
    response.write(`[${text(USERS.slice(0, HALF))},`);
    releaseUsers = () => response.end(`${text(USERS.slice(HALF))}]`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new AdminClient({ baseUrl: `http://127.0.0.1:${port}`, requestTimeoutMs: 30_000 });
});
afterAll(async () => {
  releaseUsers?.();
  await client.close();
  await new Promise((resolve) => server.close(resolve));
  await rm(outDir, { recursive: true, force: true });
});

describe('a file being written', () => {
  it('is only under its temporary name until it is complete', async () => {
    const dir = join(outDir, 'exp_20260101T000000000Z_aaaaaa');
    releaseUsers = undefined;
    const running = runExport(
      {
        id: 'exp_20260101T000000000Z_aaaaaa',
        request: { resource: 'users', format: 'ndjson', outDir },
        dir,
      },
      { client, retry: RETRY },
    );
    // the answer stalls mid-array: half the records are on disk under the temporary name
    const temp = await waitFor(
      async () => {
        if (!releaseUsers) return undefined;
        const names = await readdir(dir).catch(() => [] as string[]);
        const name = names.find((entry) => TEMP_NAME.test(entry));
        if (name === undefined) return undefined;
        return (await stat(join(dir, name))).size > 0 ? name : undefined;
      },
      { what: 'the first half of users.ndjson on disk' },
    );
    const during = await readdir(dir);
    expect(during).toEqual([temp]);
    expect(during).not.toContain('users.ndjson');
    const partial = await readFile(join(dir, temp), 'utf8');
    expect(partial.length).toBeGreaterThan(0);

    releaseUsers!();
    const manifest = await running;
    expect(manifest.counts).toEqual({ users: USERS.length });
    expect((await readdir(dir)).sort()).toEqual(['manifest.json', 'users.ndjson']);
    const lines = (await readFile(join(dir, 'users.ndjson'), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(USERS.length);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ username: `user${USERS.length}` });
  });
});

describe('a run tried again', () => {
  it('removes the temporary files an earlier attempt left, and nothing else', async () => {
    const id = 'exp_20260101T000000000Z_bbbbbb';
    const dir = join(outDir, id);
    await mkdir(dir, { recursive: true });
    // what a worker killed mid-write leaves: half a file under a temporary name
    const stale = '.users.ndjson.0123456789ab.porter-tmp';
    await writeFile(join(dir, stale), '{"userId":1,"username":"user1"}\n{"userId":2,"us');
    // not porter's temporary names, or not porter's files: they stay
    const others = ['.users.ndjson.notatempname.porter-tmp', 'notes.txt'];
    for (const name of others) await writeFile(join(dir, name), 'mine');
    releaseUsers = undefined;

    const running = runExport(
      { id, request: { resource: 'users', format: 'ndjson', outDir }, dir },
      { client, retry: RETRY },
    );
    await waitFor(() => releaseUsers, { what: 'the users read to start' });
    // the stale file went before this attempt began to write
    const during = await readdir(dir);
    expect(during).not.toContain(stale);
    releaseUsers!();
    await running;
    expect((await readdir(dir)).sort()).toEqual(
      ['manifest.json', 'users.ndjson', ...others].sort(),
    );
  });
});
