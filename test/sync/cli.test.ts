/**
 * `porter sync` and `porter approve` as a cron job runs them: exit 0 done, 2 some records
 * failed, 3 held for approval (nothing written), 1 the sync failed; usage errors before any
 * import is stored.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { runPorter } from '../helpers/porter-cli.js';
import { csv, type Pipeline } from '../helpers/pipeline.js';
import { seedUsers, startSyncPipeline, status, syncChildEnv, writes } from './sync-fixture.js';

let pipeline: Pipeline;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  pipeline = await startSyncPipeline();
  env = syncChildEnv(pipeline);
  dir = await mkdtemp(join(tmpdir(), 'porter-sync-'));
  // each test works in its own part of the directory, kept apart by --scope-match
  await seedUsers(pipeline, [
    { username: 'a.keep' },
    { username: 'a.leave' },
    { username: 'b.keep' },
    { username: 'c.keep' },
    { username: 'c.one' },
    { username: 'c.two' },
    { username: 'c.three' },
    { username: 'd.keep' },
    { username: 'f.keep' },
    { username: 'f.one' },
    { username: 'f.two' },
  ]);
});
afterAll(async () => {
  await pipeline?.close();
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('porter sync exit codes', () => {
  it('0: every record done; the missing user is locked', async () => {
    const path = await file('a.csv', csv(['username'], [['a.keep']]));
    const run = await runPorter(
      ['sync', path, '--resource', 'users', '--scope-match', '^a\\.', '--max-deletes', '1'],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('sync: 1 lock, 0 delete of 2 in scope');
    expect(status(pipeline, 'a.leave')).toBe('Locked');
  });

  it('2: some records failed', async () => {
    const path = await file(
      'b.csv',
      csv(
        ['username', 'groups'],
        [
          ['b.keep', ''],
          ['b.bad', 'NoSuchGroup'],
        ],
      ),
    );
    const run = await runPorter(
      ['import', path, '--resource', 'users', '--mode', 'sync', '--scope-match', '^b\\.', '--wait'],
      env,
    );
    expect(run.code, run.stderr).toBe(2);
  });

  it('3: held past the threshold, nothing written; approve --wait writes the plan (exit 0)', async () => {
    const path = await file('c.csv', csv(['username'], [['c.keep']]));
    const before = writes(pipeline);
    const report = join(dir, 'c-plan.csv');
    const run = await runPorter(
      ['sync', path, '--resource', 'users', '--scope-match', '^c\\.', '--report', report],
      env,
    );
    expect(run.code, run.stderr).toBe(3);
    const id = run.stdout.trim();
    expect(run.stderr).toContain(`sync ${id} held`);
    expect(run.stderr).toContain(
      'sync: 3 lock, 0 delete of 4 in scope on the server (threshold 0)',
    );
    expect(run.stderr).toContain(`porter status ${id}`);
    expect(run.stderr).toContain(`porter approve ${id}`);
    expect(writes(pipeline)).toBe(before);
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(report, 'utf8')).toContain(',,,c.two,lock,planned,');

    const shown = await runPorter(['status', id], env);
    expect(shown.stdout).toContain('held');
    expect(shown.stdout).toContain('planned: 1 unchanged, 3 lock');

    // four eyes: the shell user who started it cannot approve it, and naming another shell
    // user is no second pair of eyes: the refusal says how to get one
    const self = await runPorter(['approve', id, '--wait', '--yes'], env);
    expect(self.code).toBe(77);
    expect(self.stderr).toContain('[PORTER_APPROVAL_SELF]');
    const renamed = await runPorter(['approve', id, '--wait', '--yes'], {
      ...env,
      PORTER_CLI_USER: 'reviewer',
    });
    expect(renamed.code, renamed.stderr).toBe(77);
    expect(renamed.stderr).toContain('[PORTER_APPROVAL_SELF]');
    expect(renamed.stderr).toContain('--token');
    expect(renamed.stderr).toContain('porter tokens create --name NAME --role approver');
    expect((await pipeline.context.store.get(id))?.state).toBe('held');
    expect(status(pipeline, 'c.three')).toBe('Active');

    // a token is checked as the API checks it: a wrong one, or one of too small a role, is refused
    const wrong = await runPorter(
      ['approve', id, '--yes', '--token', `porter_${'0'.repeat(16)}_${'x'.repeat(43)}`],
      env,
    );
    expect(wrong.code, wrong.stderr).toBe(77);
    expect(wrong.stderr).toContain('[PORTER_UNAUTHORIZED]');
    const { tokens } = securityOf(pipeline.context);
    const made = { at: new Date().toISOString(), actionId: 'made', who: { name: 'test' } };
    const viewer = (await tokens.create({ name: 'cli-viewer', role: 'viewer' }, made)).token;
    const small = await runPorter(['approve', id, '--yes'], { ...env, PORTER_TOKEN: viewer });
    expect(small.code, small.stderr).toBe(77);
    expect(small.stderr).toContain('needs the approver role');
    expect((await pipeline.context.store.get(id))?.state).toBe('held');

    // an approver's token passes, and the approval names it
    const reviewer = (await tokens.create({ name: 'reviewer', role: 'approver' }, made)).token;
    const approved = await runPorter(['approve', id, '--wait', '--yes', '--token', reviewer], env);
    expect(approved.code, approved.stderr).toBe(0);
    expect(status(pipeline, 'c.three')).toBe('Locked');
    expect((await pipeline.context.store.get(id))?.approval?.by).toBe('token:reviewer');
    const twice = await runPorter(['approve', id, '--yes'], { ...env, PORTER_TOKEN: reviewer });
    expect(twice.code).toBe(65);
  });

  it('3 for a dry run a real run would hold: it says so, and writes nothing', async () => {
    const path = await file('f.csv', csv(['username'], [['f.keep']]));
    const before = writes(pipeline);
    const run = await runPorter(
      ['sync', path, '--resource', 'users', '--scope-match', '^f\\.', '--dry-run'],
      env,
    );
    expect(run.code, run.stderr).toBe(3);
    const id = run.stdout.trim();
    expect(run.stderr).toContain(
      'sync: 2 lock, 0 delete of 3 in scope on the server (threshold 0)',
    );
    expect(run.stderr).toContain(
      'a real run would be held: 2 locks and deletes pass the threshold of 0; nothing was written (exit 3)',
    );
    expect(run.stderr).toContain(`porter apply ${id}`);
    expect(writes(pipeline)).toBe(before);
    expect(status(pipeline, 'f.one')).toBe('Active');
    // under the threshold a dry run ends 0, with no such line
    const under = await runPorter(
      [
        'sync',
        path,
        '--resource',
        'users',
        '--scope-match',
        '^f\\.',
        '--dry-run',
        '--max-deletes',
        '2',
      ],
      env,
    );
    expect(under.code, under.stderr).toBe(0);
    expect(under.stderr).not.toContain('would be held');
  });

  it('3 then porter cancel: the held plan is dropped', async () => {
    const path = await file('d.csv', csv(['username'], [['d.new']]));
    const run = await runPorter(
      ['sync', path, '--resource', 'users', '--scope-match', '^d\\.', '--missing', 'delete'],
      env,
    );
    expect(run.code, run.stderr).toBe(3);
    const cancelled = await runPorter(['cancel', run.stdout.trim()], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toContain('cancelled');
    expect(pipeline.sandbox.store.userByName('d.keep')).toBeDefined();
    expect(pipeline.sandbox.store.userByName('d.new')).toBeUndefined();
  });

  it('1: the sync failed (its scope group does not exist), nothing written', async () => {
    const path = await file('e.csv', csv(['username'], [['e.new']]));
    const run = await runPorter(
      ['sync', path, '--resource', 'users', '--scope-group', 'NoSuchGroup'],
      env,
    );
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('NoSuchGroup');
    expect(pipeline.sandbox.store.userByName('e.new')).toBeUndefined();
  });

  it('usage errors are refused before anything is stored', async () => {
    const path = await file('f.csv', csv(['username'], [['f.new']]));
    const protect = await file('protect.txt', 'ok\n bad\n');
    for (const args of [
      ['--resource', 'acls'],
      ['--resource', 'groups', '--missing', 'lock'],
      ['--resource', 'users', '--scope-match', '(a+)+'],
      ['--resource', 'users', '--max-deletes', 'many'],
      ['--resource', 'users', '--protect', protect],
    ]) {
      const run = await runPorter(['sync', path, ...args], env);
      expect(run.code, args.join(' ')).toBe(64);
      expect(run.stdout).toBe('');
    }
    const mixed = await runPorter(
      ['import', path, '--resource', 'users', '--mode', 'upsert', '--missing', 'delete'],
      env,
    );
    expect(mixed.code).toBe(64);
  });
});
