/**
 * One set of conventions for every command: --wait and --no-wait wherever work is queued, with
 * one default (return once queued; sync alone waits); --report wherever a command ends with
 * records; --force only overwrites an output file; status --follow; no output overwritten unasked.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPorter } from '../helpers/porter-cli.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  env = pipeline.childEnv();
  dir = await mkdtemp(join(tmpdir(), 'porter-conventions-'));
});
afterAll(async () => {
  await pipeline?.close();
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

const QUEUEING = ['import', 'sync', 'apply', 'approve', 'retry', 'undo', 'export', 'migrate'];
const ENDING_WITH_RECORDS = ['import', 'sync', 'apply', 'approve', 'retry', 'undo'];

describe('the same flags on every command', () => {
  it('every command that queues work takes --wait and --no-wait; those ending with records take --report', async () => {
    for (const command of QUEUEING) {
      const help = await runPorter([command, '--help'], env);
      expect(help.stdout, command).toMatch(/--wait\b/);
      expect(help.stdout, command).toMatch(/--no-wait\b/);
      if (ENDING_WITH_RECORDS.includes(command)) {
        expect(help.stdout, command).toMatch(/--report <file>/);
        expect(help.stdout, command).toMatch(/--force\s+overwrite the --report file/);
      }
    }
    const undo = await runPorter(['undo', '--help'], env);
    expect(undo.stdout).toContain('--even-changed');
  });

  it('import --no-wait returns once queued; status --follow follows it and exits with its code', async () => {
    const path = await file(
      'mixed.csv',
      csv(
        ['username', 'groups'],
        [
          ['conv.ok', ''],
          ['conv.bad', 'NoSuchGroup'],
        ],
      ),
    );
    const queued = await runPorter(
      ['import', path, '--resource', 'users', '--mode', 'upsert', '--no-wait'],
      env,
    );
    expect(queued.code, queued.stderr).toBe(0);
    const id = queued.stdout.trim();
    expect(queued.stderr).toContain(`follow with: porter status ${id} --follow`);
    const followed = await runPorter(['status', id, '--follow'], env);
    expect(followed.code, followed.stderr).toBe(2);
    expect(followed.stdout).toContain(`import ${id} completed_with_errors`);
    expect(followed.stdout).toMatch(/^1 failed: PORTER_GROUP_UNRESOLVED$/m);
  });

  it('sync takes --wait (its default) and --no-wait', async () => {
    const path = await file('sync.csv', csv(['username'], [['conv.sync']]));
    const args = ['sync', path, '--resource', 'users', '--scope-match', '^conv\\.sync'];
    const waited = await runPorter([...args, '--wait'], env);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stderr).toContain('sync: 0 lock');
    const queued = await runPorter([...args, '--no-wait'], env);
    expect(queued.code, queued.stderr).toBe(0);
    expect(queued.stderr).toContain('follow with: porter status');
  });

  it('--report on apply, retry and undo waits for the end and writes the report; never over a file unasked', async () => {
    const path = await file('plan.csv', csv(['username', 'email'], [['conv.plan', 'p@x.org']]));
    const plan = await runPorter(
      ['import', path, '--resource', 'users', '--mode', 'upsert', '--dry-run', '--wait'],
      env,
    );
    expect(plan.code, plan.stderr).toBe(0);
    const report = join(dir, 'apply.csv');
    const applied = await runPorter(
      ['apply', plan.stdout.trim(), '--yes', '--report', report],
      env,
    );
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toContain(`report written to ${report}`);
    expect(await readFile(report, 'utf8')).toContain('conv.plan');
    expect(pipeline.sandbox.store.userByName('conv.plan')).toBeDefined();

    const undoReport = join(dir, 'undo.json');
    const refused = await runPorter(
      ['undo', applied.stdout.trim(), '--yes', '--report', report, '--format', 'json'],
      env,
    );
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain('exists; pass --force to overwrite it');
    expect(refused.stdout).toBe('');
    const undone = await runPorter(
      ['undo', applied.stdout.trim(), '--yes', '--report', undoReport, '--format', 'json'],
      env,
    );
    expect(undone.code, undone.stderr).toBe(0);
    expect(JSON.parse(await readFile(undoReport, 'utf8'))).toHaveLength(1);
    expect(pipeline.sandbox.store.userByName('conv.plan')).toBeUndefined();

    const noWait = await runPorter(['retry', 'imp_x', '--no-wait', '--report', report], env);
    expect(noWait.code).toBe(64);
    expect(noWait.stderr).toContain('--report needs the end of the work');
  });

  it('porter diff does not write over an earlier diff unless --force', async () => {
    const out = join(dir, 'porter-diff');
    const args = ['diff', '--from', 'default', '--to', 'default', '--out', out];
    const first = await runPorter(args, env);
    expect(first.code, first.stderr).toBe(0);
    const again = await runPorter(args, env);
    expect(again.code).toBe(64);
    expect(again.stderr).toContain('holds diff.csv already; pass --force');
    const forced = await runPorter([...args, '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
  });
});
