/**
 * `porter sync --source` and `porter import --source` against a real slapd, as a nightly cron
 * job runs them: the directory's users synced into the sandbox; an incremental run that picks up
 * a changed and a new entry and locks nobody, though an entry left the directory; a wrong
 * password and an emptied directory write nothing.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Attribute, Change } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import {
  BASE_DN,
  PORTER_DN,
  personLdif,
  startSlapd,
  userDn,
  type TestSlapd,
} from '../helpers/slapd.js';
import { startSyncPipeline, status, syncChildEnv, writes } from '../sync/sync-fixture.js';

let slapd: TestSlapd;
let pipeline: Pipeline;
let dir: string;
let env: Record<string, string>;

const MAPPING = {
  columns: { uid: 'username', givenName: 'firstName', sn: 'lastName', mail: 'email' },
  ignore: ['dn', 'entryUUID', 'directoryGroups'],
  defaults: { type: 'General User', status: 'Active' },
};

beforeAll(async () => {
  slapd = await startSlapd({
    ldif: ['ann', 'bob', 'cat']
      .map((uid) => personLdif(`ldap.${uid}`, { givenName: uid }))
      .join('\n\n'),
  });
  pipeline = await startSyncPipeline();
  dir = await mkdtemp(join(tmpdir(), 'porter-ldap-sync-'));
  const source = (password: string) => ({
    kind: 'ldap',
    url: slapd.url,
    bindDN: PORTER_DN,
    password: { env: password },
    baseDN: `ou=people,${BASE_DN}`,
    attributes: ['uid', 'givenName', 'sn', 'mail'],
    pageSize: 2,
  });
  await writeFile(
    join(dir, 'sources.json'),
    JSON.stringify({ dir: source('LDAP_TEST_PASSWORD'), wrong: source('LDAP_TEST_WRONG') }),
  );
  await writeFile(join(dir, 'mapping.json'), JSON.stringify(MAPPING));
  env = {
    ...syncChildEnv(pipeline),
    PORTER_SOURCES_FILE: join(dir, 'sources.json'),
    LDAP_TEST_PASSWORD: 'porter-secret',
    LDAP_TEST_WRONG: 'not-it',
  };
}, 60_000);
afterAll(async () => {
  await pipeline?.close();
  await slapd?.close();
  await rm(dir, { recursive: true, force: true });
});

const scope = ['--scope-match', '^ldap\\.'];
const map = (): string[] => ['--map', join(dir, 'mapping.json')];

describe('porter sync --source', () => {
  it("porter import --source plans the directory's users as creates (a dry run)", async () => {
    const before = writes(pipeline);
    const run = await runPorter(
      [
        'import',
        '--source',
        'dir',
        '--resource',
        'users',
        '--mode',
        'create',
        '--dry-run',
        '--wait',
        ...map(),
      ],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('read 3 entries from source dir');
    expect(run.stderr).toMatch(/3 create/);
    expect(writes(pipeline)).toBe(before);
  });

  it('lists and checks the sources, no secret shown', async () => {
    const list = await runPorter(['sources'], env);
    expect(list.stdout).toContain('env:LDAP_TEST_PASSWORD');
    expect(list.stdout).not.toContain('porter-secret');
    const check = await runPorter(['sources', 'check', 'dir'], env);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/dir\s+ok .* users 3/);
    const unset = await runPorter(['sources', 'check', 'wrong'], { ...env, LDAP_TEST_WRONG: '' });
    expect(unset.code).toBe(1);
    expect(unset.stdout).toContain('environment variable LDAP_TEST_WRONG is not set');
  });

  it('a wrong password stops the sync before anything is written (exit 69)', async () => {
    const before = writes(pipeline);
    const run = await runPorter(
      ['sync', '--source', 'wrong', '--resource', 'users', ...map(), ...scope],
      env,
    );
    expect(run.code).toBe(69);
    expect(run.stderr).toContain('invalid credentials');
    expect(run.stderr).toContain('PORTER_SOURCE_FAILED');
    expect(run.stderr).not.toContain('not-it');
    expect(writes(pipeline)).toBe(before);
  });

  it('syncs the directory, then an incremental run creates and updates, and locks no one', async () => {
    const full = await runPorter(
      ['sync', '--source', 'dir', '--resource', 'users', ...map(), ...scope],
      env,
    );
    expect(full.code, full.stderr).toBe(0);
    expect(full.stderr).toContain('read 3 entries from source dir');
    for (const uid of ['ann', 'bob', 'cat']) expect(status(pipeline, `ldap.${uid}`)).toBe('Active');

    const admin = await slapd.admin();
    try {
      await admin.modify(
        userDn('ldap.ann'),
        new Change({
          operation: 'replace',
          modification: new Attribute({ type: 'givenName', values: ['Annie'] }),
        }),
      );
      await admin.add(userDn('ldap.dan'), {
        objectClass: 'inetOrgPerson',
        uid: 'ldap.dan',
        cn: 'dan',
        sn: 'dan',
        givenName: 'dan',
        mail: 'ldap.dan@example.org',
      });
      await admin.del(userDn('ldap.cat'));
    } finally {
      await admin.unbind();
    }
    const incremental = await runPorter(
      ['sync', '--source', 'dir', '--resource', 'users', '--incremental', ...map()],
      env,
    );
    expect(incremental.code, incremental.stderr).toBe(0);
    // modifyTimestamp has a resolution of one second: the entries of the last second come again
    expect(incremental.stderr).toMatch(/read [2-5] entries from source dir .*changed since/);
    expect(pipeline.sandbox.store.userByName('ldap.ann')?.firstName).toBe('Annie');
    expect(status(pipeline, 'ldap.dan')).toBe('Active');
    // deletions are decided by a full read only
    expect(status(pipeline, 'ldap.cat')).toBe('Active');

    const nightly = await runPorter(
      ['sync', '--source', 'dir', '--resource', 'users', ...map(), ...scope, '--max-deletes', '1'],
      env,
    );
    expect(nightly.code, nightly.stderr).toBe(0);
    expect(status(pipeline, 'ldap.cat')).toBe('Locked');
  }, 60_000);

  it('a renamed entry (same entryUUID) is renamed in the DAM, not created again', async () => {
    const before = pipeline.sandbox.store.userByName('ldap.bob')!;
    const admin = await slapd.admin();
    try {
      await admin.modifyDN(userDn('ldap.bob'), 'uid=ldap.robert');
    } finally {
      await admin.unbind();
    }
    const run = await runPorter(
      ['sync', '--source', 'dir', '--resource', 'users', ...map(), ...scope, '--max-deletes', '1'],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const after = pipeline.sandbox.store.userByName('ldap.robert');
    expect(after?.userId).toBe(before.userId);
    expect(pipeline.sandbox.store.userByName('ldap.bob')).toBeUndefined();
  }, 60_000);

  it('a directory that returns no entry where the last full read saw many is held', async () => {
    const admin = await slapd.admin();
    try {
      for (const uid of ['ann', 'robert', 'dan']) await admin.del(userDn(`ldap.${uid}`));
    } finally {
      await admin.unbind();
    }
    const before = writes(pipeline);
    const run = await runPorter(
      [
        'sync',
        '--source',
        'dir',
        '--resource',
        'users',
        ...map(),
        ...scope,
        '--max-deletes',
        '100%',
      ],
      env,
    );
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('the directory returned no entry where its last full read saw 3');
    expect(writes(pipeline)).toBe(before);
    expect(status(pipeline, 'ldap.ann')).toBe('Active');
  }, 60_000);
});
