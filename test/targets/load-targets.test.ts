/** The targets file and the ADMIN_* variables: what is accepted, refused, and shown. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { bindTarget, jobTarget } from '../../src/targets/job-target.js';
import { loadTargets } from '../../src/targets/targets.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-targets-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function targetsFile(content: unknown, name = 'targets.json'): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function load(file: string | undefined, env: Record<string, string> = {}) {
  const vars = { ...(file ? { PORTER_TARGETS_FILE: file } : {}), ...env };
  return loadTargets(loadEnv(vars), vars);
}

describe('the targets file', () => {
  it('accepts the least form of the issue, and keeps `default` from the ADMIN_* variables', async () => {
    const file = await targetsFile({
      old: { url: 'http://127.0.0.1:8080' },
      new: { url: 'https://dam.example.com', apiKey: { env: 'NEW_DAM_KEY' }, maxRps: 20 },
    });
    const targets = load(file, { NEW_DAM_KEY: 'k-123', ADMIN_BASE_URL: 'http://127.0.0.1:9000' });
    expect(targets.names().sort()).toEqual(['default', 'new', 'old']);
    const fresh = targets.require('new');
    expect(fresh.client?.auth?.apiKey).toBe('k-123');
    expect(fresh.maxRps).toBe(20);
    expect(fresh.summary).toMatchObject({
      url: 'https://dam.example.com',
      auth: 'apiKey',
      secrets: ['env:NEW_DAM_KEY'],
      from: 'file',
    });
    // no secret in what may be shown
    expect(JSON.stringify(targets.list().map((target) => target.summary))).not.toContain('k-123');
    expect(targets.require('default').summary).toMatchObject({
      url: 'http://127.0.0.1:9000',
      from: 'environment',
    });
  });

  it('refuses a secret written in the file, naming the target and field', async () => {
    const file = await targetsFile({ prod: { url: 'https://x.example', apiKey: 'plain-secret' } });
    expect(() => load(file)).toThrow(
      /PORTER_TARGETS_FILE: prod\.apiKey: a secret is never written/,
    );
  });

  it('refuses unknown fields, bad names and files that are not JSON', async () => {
    expect(() => load(`${dir}/missing.json`)).toThrow(/does not exist/);
    const notJson = await targetsFile('{nope', 'bad.json');
    expect(() => load(notJson)).toThrow(/is not valid JSON/);
    const typo = await targetsFile(
      { prod: { url: 'https://x.example', readonly: true } },
      't.json',
    );
    expect(() => load(typo)).toThrow(/prod/);
    const badName = await targetsFile({ 'Prod Site': { url: 'https://x.example' } }, 'n.json');
    expect(() => load(badName)).toThrow(/Prod Site|lower-case/);
  });

  it('reads secrets from files; an unreadable secret makes the target unusable, not the process', async () => {
    await writeFile(join(dir, 'key.txt'), 'from-file-key\n');
    const file = await targetsFile(
      {
        filed: { url: 'https://a.example', apiKey: { file: 'key.txt' } },
        broken: {
          url: 'https://b.example',
          user: 'porter',
          password: { env: 'UNSET_PASSWORD_VAR' },
        },
      },
      'secrets.json',
    );
    const targets = load(file);
    expect(targets.require('filed').client?.auth?.apiKey).toBe('from-file-key');
    const broken = targets.require('broken');
    expect(broken.client).toBeUndefined();
    expect(broken.summary.problem).toMatch(/UNSET_PASSWORD_VAR is not set/);
    expect(() => jobTarget(targets, { target: 'broken' })).toThrow(
      expect.objectContaining({ code: 'PORTER_TARGET_UNAVAILABLE' }),
    );
  });

  it('a file that names `default` replaces the ADMIN_* target', async () => {
    const file = await targetsFile({ default: { url: 'https://main.example' } }, 'default.json');
    const targets = load(file, { ADMIN_BASE_URL: 'http://127.0.0.1:9999' });
    expect(targets.require('default').summary.url).toBe('https://main.example');
  });
});

describe('fingerprints and the job rules', () => {
  it('change with the URL or the user, not with the secret', async () => {
    const one = load(undefined, { ADMIN_BASE_URL: 'http://127.0.0.1:8080', ADMIN_API_KEY: 'a' });
    const rotated = load(undefined, {
      ADMIN_BASE_URL: 'http://127.0.0.1:8080',
      ADMIN_API_KEY: 'b',
    });
    const elsewhere = load(undefined, {
      ADMIN_BASE_URL: 'http://127.0.0.1:8081',
      ADMIN_API_KEY: 'a',
    });
    const asUser = load(undefined, { ADMIN_BASE_URL: 'http://127.0.0.1:8080', ADMIN_USER: 'u' });
    const print = (set: ReturnType<typeof load>) => set.require('default').fingerprint;
    expect(print(rotated)).toBe(print(one));
    expect(print(elsewhere)).not.toBe(print(one));
    expect(print(asUser)).not.toBe(print(one));
  });

  it('bindTarget refuses unknown targets, changed fingerprints and writes to read-only targets', async () => {
    const file = await targetsFile(
      { ro: { url: 'https://ro.example', readOnly: true } },
      'readonly.json',
    );
    const targets = load(file, { ADMIN_BASE_URL: 'http://127.0.0.1:8080' });
    expect(() => bindTarget(targets, { target: 'nope' }, { writes: true })).toThrow(
      expect.objectContaining({ code: 'PORTER_TARGET_UNKNOWN' }),
    );
    expect(() => bindTarget(targets, { target: 'ro' }, { writes: true })).toThrow(
      expect.objectContaining({ code: 'PORTER_TARGET_READ_ONLY' }),
    );
    const planned = bindTarget(targets, { target: 'ro' }, { writes: false });
    expect(planned.ref).toEqual({
      target: 'ro',
      targetFingerprint: targets.require('ro').fingerprint,
      targetUrl: 'https://ro.example',
    });
    expect(() => jobTarget(targets, { target: 'ro', targetFingerprint: 'another-print' })).toThrow(
      expect.objectContaining({ code: 'PORTER_TARGET_CHANGED' }),
    );
    // a job from before targets existed means `default`, unchecked
    expect(jobTarget(targets, {}).name).toBe('default');
    // and where there is no `default`, it is refused, never sent elsewhere
    expect(() => jobTarget(load(file), {})).toThrow(
      expect.objectContaining({ code: 'PORTER_TARGET_UNKNOWN' }),
    );
  });
});
