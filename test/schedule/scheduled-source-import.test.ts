/**
 * Import schedules that read a directory source (a real slapd) at each run instead of a file:
 * added with `porter schedule add --source`, a run syncs the directory's users into the sandbox
 * through the same code as `porter sync --source`; a source that cannot be read whole is a
 * failed run that writes nothing; a source not configured is refused when the schedule is added.
 * An incremental schedule picks up a changed and a new entry and locks or deletes no one; a full
 * run against a directory emptied since the last one is held. Those runs are made as the worker
 * makes them when the schedule fires (runImportScheduleJob), at once rather than at cron time.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Attribute, Change } from 'ldapts';
import {
  deleteImportSchedule,
  findImportSchedule,
  importScheduleRuns,
  runImportScheduleJob,
} from '../../src/app/import-schedules.js';
import type { ImportInfo } from '../../src/model/import.js';
import { holdReasons } from '../../src/sync/sync-options.js';
import type { ScheduleRun } from '../../src/imports/schedule-history.js';
import type { Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';
import {
  BASE_DN,
  PORTER_DN,
  PORTER_PASSWORD,
  personLdif,
  startSlapd,
  type TestSlapd,
} from '../helpers/slapd.js';
import { startSyncPipeline, status, syncChildEnv, writes } from '../sync/sync-fixture.js';

const EVERY_SECOND = '*/1 * * * * *';
/** A schedule that does not fire during the test: its runs are made by hand. */
const NEW_YEAR = '0 3 1 1 *';
const MAPPING = {
  columns: { uid: 'username', givenName: 'firstName', sn: 'lastName', mail: 'email' },
  ignore: ['dn', 'entryUUID', 'directoryGroups'],
  defaults: { type: 'General User', status: 'Active' },
};

let slapd: TestSlapd;
let pipeline: Pipeline;
let dir: string;
let env: Record<string, string>;
const added: string[] = [];

/** An organizational unit of its own, and people in it, as LDIF. */
function unitLdif(ou: string, uids: readonly string[]): string {
  return [
    `dn: ou=${ou},${BASE_DN}\nobjectClass: organizationalUnit\nou: ${ou}`,
    ...uids.map((uid) => personLdif(uid, { givenName: uid }).replace(',ou=people,', `,ou=${ou},`)),
  ].join('\n\n');
}

function unitDn(ou: string, uid: string): string {
  return `uid=${uid},ou=${ou},${BASE_DN}`;
}

beforeAll(async () => {
  slapd = await startSlapd({
    ldif: [
      ...['ann', 'bob', 'cat'].map((uid) => personLdif(`dirsched.${uid}`, { givenName: uid })),
      unitLdif('staff', ['dirinc.ann', 'dirinc.bob', 'dirinc.cat']),
      unitLdif('leavers', ['dirgone.ann', 'dirgone.bob']),
    ].join('\n\n'),
  });
  dir = await mkdtemp(join(tmpdir(), 'porter-source-schedule-'));
  await writeFile(join(dir, 'porter.secret'), `${PORTER_PASSWORD}\n`);
  await writeFile(join(dir, 'wrong.secret'), 'not-it\n');
  const source = (secret: string, ou = 'people') => ({
    kind: 'ldap',
    url: slapd.url,
    bindDN: PORTER_DN,
    password: { file: join(dir, secret) },
    baseDN: `ou=${ou},${BASE_DN}`,
    attributes: ['uid', 'givenName', 'sn', 'mail'],
    pageSize: 2,
  });
  await writeFile(
    join(dir, 'sources.json'),
    JSON.stringify({
      dir: source('porter.secret'),
      wrong: source('wrong.secret'),
      staff: source('porter.secret', 'staff'),
      leavers: source('porter.secret', 'leavers'),
    }),
  );
  await writeFile(join(dir, 'mapping.json'), JSON.stringify(MAPPING));
  const sourcesEnv = { PORTER_SOURCES_FILE: join(dir, 'sources.json') };
  // the in-process workers read the sources file the schedule names, as a worker host does
  pipeline = await startSyncPipeline(undefined, sourcesEnv);
  env = { ...syncChildEnv(pipeline), ...sourcesEnv };
}, 60_000);
afterEach(async () => {
  for (const name of added.splice(0)) await deleteImportSchedule(pipeline.context, name);
});
afterAll(async () => {
  await pipeline?.context.importScheduleQueue.obliterate({ force: true }).catch(() => {});
  await pipeline?.close();
  await slapd?.close();
  await rm(dir, { recursive: true, force: true });
});

async function addSchedule(name: string, args: string[], cron = EVERY_SECOND): Promise<void> {
  added.push(name);
  const run = await runPorter(
    ['schedule', 'add', name, '--cron', cron, '--resource', 'users', ...args],
    env,
  );
  expect(run.code, run.stderr).toBe(0);
}

/** The first run of the schedule that matches; the schedule is removed once it is seen. */
async function firstRun(name: string, outcome: ScheduleRun['outcome']): Promise<ScheduleRun> {
  const run = await waitFor(
    async () =>
      (await importScheduleRuns(pipeline.context, name, 100)).findLast(
        (entry) => entry.outcome === outcome,
      ),
    { timeoutMs: 30_000, what: `a run of ${name} ${outcome}` },
  );
  await deleteImportSchedule(pipeline.context, name);
  return run;
}

describe('an import schedule that reads a directory source', () => {
  it('syncs the directory as it is when the schedule fires', async () => {
    await addSchedule('dir-nightly', [
      '--source',
      'dir',
      '--mode',
      'sync',
      '--map',
      join(dir, 'mapping.json'),
      '--scope-match',
      '^dirsched\\.',
    ]);
    const list = await runPorter(['schedule', 'list'], env);
    expect(list.stdout).toContain('dir-nightly');
    expect(list.stdout).toContain('import source dir → default: users sync');

    const run = await firstRun('dir-nightly', 'imported');
    expect(run.importId).toMatch(/^imp_/);
    const info = await pipeline.waitFinal(run.importId!);
    expect(info.state, JSON.stringify(info)).toBe('completed');
    expect(info.options.source).toMatchObject({ name: 'dir', entries: 3 });
    expect(info.options.mode).toBe('sync');
    expect(info.startedBy).toBe('schedule:dir-nightly');
    for (const uid of ['ann', 'bob', 'cat'])
      expect(status(pipeline, `dirsched.${uid}`)).toBe('Active');
  });

  it('a source that cannot be read whole is a failed run that writes nothing', async () => {
    const before = writes(pipeline);
    await addSchedule('dir-wrong', [
      '--source',
      'wrong',
      '--mode',
      'sync',
      '--map',
      join(dir, 'mapping.json'),
    ]);
    const run = await firstRun('dir-wrong', 'failed');
    expect(run.importId).toBeUndefined();
    expect(run.note).toContain('the source could not be imported');
    expect(writes(pipeline)).toBe(before);
  });

  it('refuses a source that is not configured, and --source with --import or --even-unchanged', async () => {
    for (const args of [
      ['--source', 'nope', '--mode', 'upsert'],
      ['--source', 'dir', '--import', join(dir, 'mapping.json'), '--mode', 'upsert'],
      ['--source', 'dir', '--even-unchanged', '--mode', 'upsert'],
      ['--import', join(dir, 'feed.csv'), '--incremental', '--mode', 'upsert'],
    ]) {
      const run = await runPorter(
        ['schedule', 'add', 'refused', '--cron', EVERY_SECOND, '--resource', 'users', ...args],
        env,
      );
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).not.toBe(0);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(await importScheduleRuns(pipeline.context, 'refused')).toEqual([]);
    const list = await runPorter(['schedule', 'list'], env);
    expect(list.stdout).not.toContain('refused');
  });
});

/** Runs the schedule once, as its worker does when it fires, and waits for its import to settle. */
async function runNow(name: string, jobId: string): Promise<ImportInfo> {
  const schedule = await findImportSchedule(pipeline.context, name);
  expect(schedule, name).toBeDefined();
  const run = await runImportScheduleJob(
    pipeline.context,
    { schedule: { name, addedBy: schedule!.addedBy }, request: schedule!.request },
    jobId,
  );
  expect(run.outcome, run.note).toBe('imported');
  const info = await waitFor(
    async () => {
      const found = await pipeline.context.store.get(run.importId!);
      return found?.settled || found?.state === 'held' ? found : undefined;
    },
    { timeoutMs: 30_000, what: `the import of ${name}` },
  );
  expect(info.startedBy).toBe(`schedule:${name}`);
  return info;
}

/** User deletes the sandbox has answered so far. */
function deletes(): number {
  const { users } = pipeline.sandbox.store.stats.writes;
  return users.DELETE;
}

describe('runs of a source schedule, made as its worker makes them', () => {
  it('an incremental run picks up a changed and a new entry, and locks or deletes no one', async () => {
    const sync = ['--source', 'staff', '--mode', 'sync', '--map', join(dir, 'mapping.json')];
    await addSchedule('staff-nightly', [...sync, '--scope-match', '^dirinc\\.'], NEW_YEAR);
    await addSchedule('staff-often', [...sync, '--incremental'], NEW_YEAR);
    const full = await runNow('staff-nightly', 'staff-full-1');
    expect(full.state, JSON.stringify(full)).toBe('completed');
    for (const uid of ['ann', 'bob', 'cat'])
      expect(status(pipeline, `dirinc.${uid}`)).toBe('Active');

    const admin = await slapd.admin();
    try {
      await admin.modify(
        unitDn('staff', 'dirinc.ann'),
        new Change({
          operation: 'replace',
          modification: new Attribute({ type: 'givenName', values: ['Annie'] }),
        }),
      );
      await admin.add(unitDn('staff', 'dirinc.dan'), {
        objectClass: 'inetOrgPerson',
        uid: 'dirinc.dan',
        cn: 'dan',
        sn: 'dan',
        givenName: 'dan',
        mail: 'dirinc.dan@example.org',
      });
      await admin.del(unitDn('staff', 'dirinc.cat'));
    } finally {
      await admin.unbind();
    }
    const before = deletes();
    const incremental = await runNow('staff-often', 'staff-inc-1');
    expect(incremental.state, JSON.stringify(incremental)).toBe('completed');
    // an incremental read never decides what is missing: the sync runs as an upsert
    expect(incremental.options.mode).toBe('upsert');
    expect(incremental.options.source?.since).toBeDefined();
    // modifyTimestamp has a resolution of one second: the entries of the last second come again
    expect(incremental.options.source?.entries).toBeGreaterThanOrEqual(2);
    expect(incremental.options.source?.entries).toBeLessThanOrEqual(4);
    expect(pipeline.sandbox.store.userByName('dirinc.ann')?.firstName).toBe('Annie');
    expect(status(pipeline, 'dirinc.dan')).toBe('Active');
    // cat left the directory; only a full read decides that
    expect(status(pipeline, 'dirinc.cat')).toBe('Active');
    expect(incremental.actions?.lock ?? 0).toBe(0);
    expect(incremental.actions?.delete ?? 0).toBe(0);
    expect(deletes()).toBe(before);
  }, 60_000);

  it('a full run against a directory emptied since the last run is held, and nothing is deleted', async () => {
    await addSchedule(
      'leavers-nightly',
      [
        '--source',
        'leavers',
        '--mode',
        'sync',
        '--map',
        join(dir, 'mapping.json'),
        '--scope-match',
        '^dirgone\\.',
        '--missing',
        'delete',
        '--max-deletes',
        '100%',
      ],
      NEW_YEAR,
    );
    const first = await runNow('leavers-nightly', 'leavers-1');
    expect(first.state, JSON.stringify(first)).toBe('completed');
    for (const uid of ['ann', 'bob']) expect(status(pipeline, `dirgone.${uid}`)).toBe('Active');

    const admin = await slapd.admin();
    try {
      for (const uid of ['ann', 'bob']) await admin.del(unitDn('leavers', `dirgone.${uid}`));
    } finally {
      await admin.unbind();
    }
    const before = writes(pipeline);
    const emptied = await runNow('leavers-nightly', 'leavers-2');
    expect(emptied.state, JSON.stringify(emptied)).toBe('held');
    expect(emptied.options.source).toMatchObject({ name: 'leavers', entries: 0, lastEntries: 2 });
    expect(emptied.sync).toMatchObject({ held: true, sourceEmptied: 2, deletes: 2 });
    expect(holdReasons(emptied.sync!)).toContain(
      'the directory returned no entry where its last full read saw 2',
    );
    expect(writes(pipeline)).toBe(before);
    for (const uid of ['ann', 'bob']) expect(status(pipeline, `dirgone.${uid}`)).toBe('Active');
  }, 60_000);
});
