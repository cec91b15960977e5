/**
 * The sources file refuses what would read a directory as someone other than it names: a
 * bindDN without its password (an unauthenticated bind, which a directory may take as
 * anonymous). No secret is in the refusal or the listing.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPorterError } from '../../src/errors/porter-error.js';
import { loadSources } from '../../src/sources/sources.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-sources-file-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function sourcesFile(entry: Record<string, unknown>): Promise<string> {
  const file = join(dir, `sources-${Math.random().toString(36).slice(2)}.json`);
  const base = {
    kind: 'ldap',
    url: 'ldap://127.0.0.1:1389',
    baseDN: 'dc=example,dc=org',
    attributes: ['uid', 'mail'],
  };
  await writeFile(file, JSON.stringify({ dir: { ...base, ...entry } }));
  return file;
}

describe('the sources file', () => {
  it('refuses a bindDN without its password', async () => {
    const file = await sourcesFile({ bindDN: 'cn=porter,dc=example,dc=org' });
    let refused: unknown;
    try {
      loadSources({ PORTER_SOURCES_FILE: file });
    } catch (error) {
      refused = error;
    }
    expect(isPorterError(refused) && refused.code).toBe('PORTER_CONFIG_INVALID');
    expect(String((refused as Error).message)).toMatch(
      /dir\.password: a bindDN needs its password/,
    );
  });

  it('takes no bindDN (anonymous, said so), and a bindDN with its password, never showing it', async () => {
    expect(
      loadSources({ PORTER_SOURCES_FILE: await sourcesFile({}) }).require('dir').bindDN,
    ).toBeUndefined();
    const secret = join(dir, 'ldap-password');
    await writeFile(secret, 'S3cret-bind-pw\n');
    const sources = loadSources({
      PORTER_SOURCES_FILE: await sourcesFile({
        bindDN: 'cn=porter,dc=example,dc=org',
        password: { file: secret },
      }),
    });
    expect(sources.require('dir').password).toBe('S3cret-bind-pw');
    expect(JSON.stringify(sources.require('dir').summary)).not.toContain('S3cret');
  });
});
