/**
 * Two API processes behind one address hold SCIM deletes of the same target at the same moment:
 * they open one held plan between them, not one each. Each process is a real child process with
 * its own porter context, on the same Redis and prefix.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeysWithPrefix } from '../../src/util/redis.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { freshPrefix, testRedisUrl } from '../helpers/redis.js';

const SCRIPT = join(import.meta.dirname, 'fixtures', 'hold-removals.ts');
let dir: string;
let sandbox: RunningSandbox;
let targetsFile: string;
const prefix = freshPrefix('scim-hold2');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-scim-hold2-'));
  sandbox = await startSandbox({ port: 0 });
  targetsFile = join(dir, 'targets.json');
  await writeFile(
    targetsFile,
    JSON.stringify({ idp: { url: sandbox.url, scim: { maxDeletesPerHour: 0 } } }),
  );
});

afterAll(async () => {
  await deleteKeysWithPrefix(testRedisUrl(), prefix);
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Holder {
  /** Resolves once the process is ready to hold. */
  ready: Promise<void>;
  go: () => void;
  /** The plans its deletes were held in. */
  plans: Promise<string[]>;
}

/** Starts one "API process" that holds deletes of these users when told to go. */
function holder(ids: number[]): Holder {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, ...ids.map(String)], {
    env: {
      ...process.env,
      REDIS_URL: testRedisUrl(),
      PORTER_PREFIX: prefix,
      PORTER_TARGETS_FILE: targetsFile,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.startsWith('ready\n')) markReady();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const plans = new Promise<string[]>((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0
        ? resolve(stdout.slice('ready\n'.length).trim().split('\n'))
        : reject(new Error(`the holder exited ${code}: ${stderr}`)),
    ),
  );
  return { ready, go: () => child.stdin.end('go\n'), plans };
}

describe('the held SCIM plan, with two API processes', () => {
  it('is one plan for deletes held at the same moment by either process', async () => {
    const holders = [
      holder([101, 102, 103, 104, 105, 106]),
      holder([201, 202, 203, 204, 205, 206]),
    ];
    await Promise.all(holders.map((one) => one.ready));
    for (const one of holders) one.go();
    const [one, two] = await Promise.all(holders.map((each) => each.plans));
    expect(one).toHaveLength(6);
    expect(two).toHaveLength(6);
    expect(new Set([...one!, ...two!]).size).toBe(1);
  });
});
