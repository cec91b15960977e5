/**
 * Commands behave alike: `porter diff` prints the comparison and writes files only with
 * `--out` (a second run is never refused for a directory it did not ask for); `porter targets
 * check --json` prints JSON; `porter --help` speaks of --target.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWho } from '../../src/cli/commands/status.js';
import { describeSync } from '../../src/cli/sync.js';
import type { ImportInfo } from '../../src/model/import.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { runPorter } from '../helpers/porter-cli.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

let one: RunningSandbox;
let two: RunningSandbox;
let dir: string;
let env: Record<string, string>;
const prefix = freshPrefix('alike');

beforeAll(async () => {
  one = await startSandbox({ port: 0, seed: { users: 3 } });
  two = await startSandbox({ port: 0, seed: { users: 2 } });
  dir = await mkdtemp(join(tmpdir(), 'porter-alike-'));
  const targets = join(dir, 'targets.json');
  await writeFile(targets, JSON.stringify({ one: { url: one.url }, two: { url: two.url } }));
  env = {
    REDIS_URL: testRedisUrl(),
    PORTER_PREFIX: prefix,
    PORTER_TARGETS_FILE: targets,
    ADMIN_BASE_URL: '',
  };
});
afterAll(async () => {
  await one?.close();
  await two?.close();
  await rm(dir, { recursive: true, force: true });
  await deletePrefix(testRedisUrl(), prefix);
});

describe('porter diff', () => {
  it('prints the comparison and writes nothing unasked; a second run is not refused', async () => {
    const before = existsSync('porter-diff');
    for (let run = 0; run < 2; run++) {
      const diff = await runPorter(['diff', '--from', 'one', '--to', 'two'], env);
      expect(diff.code, diff.stderr).toBe(2);
      expect(diff.stdout).toMatch(/^users {2}\S+ {2}\(record\): /m);
      expect(diff.stderr).toMatch(/\d+ differences/);
    }
    expect(existsSync('porter-diff')).toBe(before);
    const json = await runPorter(['diff', '--from', 'one', '--to', 'two', '--json'], env);
    const parsed = JSON.parse(json.stdout) as { differences: unknown[]; counts: object };
    expect(parsed.differences.length).toBeGreaterThan(0);
    expect(parsed.counts).toHaveProperty('users');
  });

  it('writes diff.csv and diff.json with --out only', async () => {
    const out = join(dir, 'out');
    const diff = await runPorter(['diff', '--from', 'one', '--to', 'two', '--out', out], env);
    expect(diff.code, diff.stderr).toBe(2);
    expect((await readdir(out)).sort()).toEqual(['diff.csv', 'diff.json']);
  });
});

describe('porter targets check --json and porter --help', () => {
  it('targets check --json prints JSON', async () => {
    const check = await runPorter(['targets', 'check', '--json', '--no-counts'], env);
    expect(check.code, check.stderr).toBe(0);
    const checks = JSON.parse(check.stdout) as { name: string; ok: boolean }[];
    expect(checks.map((one) => [one.name, one.ok])).toEqual([
      ['one', true],
      ['two', true],
    ]);
  });

  it('porter --help speaks of --target', async () => {
    const help = await runPorter(['--help'], env);
    expect(help.stdout).toContain('--target NAME');
    expect(help.stdout).toContain('PORTER_TARGETS_FILE');
  });
});

describe('who started and approved, and what a held sync waits for', () => {
  const held = {
    id: 'imp_01m8held0000000000000000',
    state: 'held',
    startedBy: 'cli:wally',
    onBehalfOf: 'schedule:nightly',
    approval: { by: 'token:ops', at: '2026-11-27T02:31:00.000Z', counts: {}, actions: {} },
    sync: {
      held: true,
      locks: 40,
      deletes: 0,
      inScope: 100,
      threshold: 10,
      missing: 40,
      spared: 0,
    },
  } as unknown as ImportInfo;

  it('porter status names who started it and who approved it', () => {
    expect(describeWho(held)).toBe(
      'started by cli:wally for schedule:nightly, approved by token:ops at 2026-11-27T02:31:00.000Z',
    );
  });

  it('the held-sync message says another approver must approve, and how', () => {
    expect(describeSync(held)).toContain(
      'then: another approver than cli:wally approves it (four eyes, unless its target sets requireApproval: false): ' +
        `porter approve ${held.id} as them, or Approve… in the console, writes the plan; porter cancel ${held.id} drops it`,
    );
  });
});
