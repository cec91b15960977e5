/**
 * Reading a real OpenLDAP slapd: 20,000 users through pages of 500, a group of 5,000 members,
 * nested groups, StartTLS with a test CA, and every way a read is cut short (a wrong password,
 * a size limit, the server stopped in the middle) failing with the reason instead of returning
 * part of the directory.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSource } from '../../src/sources/read-source.js';
import { loadSources, type LdapSource } from '../../src/sources/sources.js';
import { checkSource } from '../../src/sources/check-source.js';
import {
  BASE_DN,
  PORTER_DN,
  groupDn,
  groupLdif,
  personLdif,
  startSlapd,
  userDn,
  type TestSlapd,
} from '../helpers/slapd.js';

const USERS = 20_000;
let slapd: TestSlapd;

function people(count: number): string {
  return Array.from({ length: count }, (_, index) => personLdif(`user${index}`)).join('\n\n');
}

beforeAll(async () => {
  const big = Array.from({ length: 5000 }, (_, index) => userDn(`user${index}`));
  slapd = await startSlapd({
    ldif: [
      people(USERS),
      groupLdif('big', big),
      groupLdif('editors', [userDn('user1'), userDn('user2')]),
      groupLdif('staff', [groupDn('editors'), userDn('user3')]),
      groupLdif('company', [groupDn('staff')]),
    ].join('\n\n'),
    tls: true,
  });
}, 120_000);
afterAll(async () => {
  await slapd?.close();
});

async function sourceFor(entry: Record<string, unknown>, url = slapd.url): Promise<LdapSource> {
  const file = join(slapd.dir, `sources-${Math.random().toString(36).slice(2)}.json`);
  process.env.PORTER_TEST_LDAP_PASSWORD = 'porter-secret';
  await writeFile(
    file,
    JSON.stringify({
      dir: {
        kind: 'ldap',
        url,
        bindDN: PORTER_DN,
        password: { env: 'PORTER_TEST_LDAP_PASSWORD' },
        baseDN: `ou=people,${BASE_DN}`,
        attributes: ['uid', 'givenName', 'sn', 'mail'],
        pageSize: 500,
        groups: { baseDN: `ou=groups,${BASE_DN}`, nestingDepth: 1 },
        ...entry,
      },
    }),
  );
  return loadSources({ PORTER_SOURCES_FILE: file }).require('dir');
}

async function failure(read: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = (await read.then(
    () => undefined,
    (error: unknown) => error,
  )) as { code: string; message: string } | undefined;
  if (!error) throw new Error('the read did not fail');
  return error;
}

describe('a full read', () => {
  it('reads 20,000 users through pages of 500, each with its entryUUID and its groups', async () => {
    const read = await readSource(await sourceFor({}), 'users');
    expect(read.entries).toBe(USERS);
    expect(new Set(read.rows.map((row) => row.entryUUID)).size).toBe(USERS);
    const user1 = read.rows.find((row) => row.uid === 'user1')!;
    expect(user1).toMatchObject({ dn: userDn('user1'), mail: 'user1@example.org' });
    // editors ⊂ staff ⊂ company: depth 1 reaches staff, not company
    expect([...(user1.directoryGroups as string[])].sort()).toEqual(['big', 'editors', 'staff']);
    expect(read.mark).toMatch(/^\d{14}Z$/);
  }, 120_000);

  it('reads a group of 5,000 members whole, members by anchor; nesting flattened', async () => {
    const source = await sourceFor({ groups: { baseDN: `ou=groups,${BASE_DN}`, nestingDepth: 2 } });
    const read = await readSource(source, 'groups');
    const byName = new Map(read.rows.map((row) => [row.cn, row]));
    expect(byName.get('big')!.members).toHaveLength(5000);
    const users = await readSource(source, 'users');
    const anchorOf = (uid: string): unknown => users.rows.find((row) => row.uid === uid)!.entryUUID;
    expect([...(byName.get('company')!.members as string[])].sort()).toEqual(
      [anchorOf('user1'), anchorOf('user2'), anchorOf('user3')].sort(),
    );
  }, 120_000);

  it('counts the entries in scope: porter sources check', async () => {
    const check = await checkSource(await sourceFor({}));
    expect(check).toMatchObject({ ok: true, counts: { users: USERS, groups: 4 } });
  }, 60_000);
});

describe('StartTLS', () => {
  it('reads over StartTLS with the test CA, and refuses a server it cannot trust', async () => {
    const url = slapd.url.replace('127.0.0.1', 'localhost');
    const trusted = await sourceFor({ url, startTLS: true, ca: { file: slapd.caFile } }, url);
    expect((await checkSource(trusted)).ok).toBe(true);
    const untrusted = await sourceFor({ url, startTLS: true }, url);
    const error = await failure(readSource(untrusted, 'users'));
    expect(error.code).toBe('PORTER_SOURCE_FAILED');
    expect(error.message).toContain('StartTLS failed');
  }, 60_000);
});

describe('a read cut short fails with the reason', () => {
  it('a wrong password', async () => {
    process.env.PORTER_TEST_LDAP_WRONG = 'not-the-password';
    const source = await sourceFor({ password: { env: 'PORTER_TEST_LDAP_WRONG' } });
    const error = await failure(readSource(source, 'users'));
    expect(error.code).toBe('PORTER_SOURCE_FAILED');
    expect(error.message).toContain('invalid credentials');
    expect(error.message).not.toContain('not-the-password');
  });

  it('a size limit smaller than the directory', async () => {
    const limited = await startSlapd({ ldif: people(120), sizeLimit: 50 });
    try {
      const source = await sourceFor({ pageSize: 20 }, limited.url);
      const error = await failure(readSource(source, 'users'));
      expect(error.code).toBe('PORTER_SOURCE_FAILED');
      expect(error.message).toContain('size limit');
    } finally {
      await limited.close();
    }
  }, 60_000);

  it('the server stopped in the middle of a paged read', async () => {
    const doomed = await startSlapd({ ldif: people(3000) });
    // a proxy that stops slapd once a few pages went through it
    let bytes = 0;
    const sockets = new Set<Socket>();
    const proxy: Server = createServer((client) => {
      const upstream = connect(doomed.port, '127.0.0.1');
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        client.write(chunk);
        if (bytes > 100_000) void doomed.kill();
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as { port: number }).port;
    try {
      const source = await sourceFor({ groups: undefined }, `ldap://127.0.0.1:${port}`);
      const error = await failure(readSource(source, 'users'));
      expect(error.code).toBe('PORTER_SOURCE_FAILED');
      expect(error.message).toMatch(/stopped at page \d+|connection dropped/);
    } finally {
      for (const socket of sockets) socket.destroy();
      proxy.close();
      await doomed.close();
    }
  }, 60_000);
});
