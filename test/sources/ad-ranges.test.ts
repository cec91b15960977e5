/**
 * Active Directory's ranged member reads, against a stand-in (slapd has no ranged attributes and
 * no Active Directory can run here): a group of 5,000 members comes as `member;range=0-1499` and
 * is read to its last range; members are told by their objectGUID as GUID text.
 */
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guidText } from '../../src/sources/entry-row.js';
import { readSource } from '../../src/sources/read-source.js';
import { loadSources, type LdapSource } from '../../src/sources/sources.js';
import { AD_GROUPS, AD_PEOPLE, startAdStandIn, type AdStandIn } from '../helpers/ad-stand-in.js';

let ad: AdStandIn;
let dir: string;

beforeAll(async () => {
  ad = await startAdStandIn(5000);
  dir = await mkdtemp(join(tmpdir(), 'porter-ad-'));
});
afterAll(async () => {
  await ad?.close();
  await rm(dir, { recursive: true, force: true });
});

async function adSource(): Promise<LdapSource> {
  process.env.PORTER_TEST_AD_PASSWORD = 'ad-secret';
  const file = join(dir, 'sources.json');
  await writeFile(
    file,
    JSON.stringify({
      corp: {
        kind: 'ldap',
        flavor: 'ad',
        url: ad.url,
        bindDN: 'cn=porter,dc=corp,dc=example',
        password: { env: 'PORTER_TEST_AD_PASSWORD' },
        baseDN: AD_PEOPLE,
        attributes: ['sAMAccountName'],
        groups: { baseDN: AD_GROUPS },
      },
    }),
  );
  return loadSources({ PORTER_SOURCES_FILE: file }).require('corp');
}

describe('Active Directory', () => {
  it('writes an objectGUID as the GUID text AD tools show', () => {
    const bytes = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    expect(guidText(bytes)).toBe('33221100-5544-7766-8899-aabbccddeeff');
  });

  it('reads a group of 5,000 members through every range, members by objectGUID', async () => {
    const source = await adSource();
    const read = await readSource(source, 'groups');
    expect(read.rows).toHaveLength(1);
    const members = read.rows[0]!.members as string[];
    expect(members).toHaveLength(5000);
    const guids = ad.users.map((user) => guidText(user.attributes.objectGUID![0] as Buffer));
    expect(new Set(members)).toEqual(new Set(guids));
    expect(read.rows[0]!.objectGUID).toBe(
      guidText(ad.groups[0]!.attributes.objectGUID![0] as Buffer),
    );
  });

  it('gives every user the group found through the ranges, the anchor defaulting to objectGUID', async () => {
    const read = await readSource(await adSource(), 'users');
    expect(read.rows).toHaveLength(5000);
    const last = read.rows.find((row) => row.sAMAccountName === 'user4999')!;
    expect(last.directoryGroups).toEqual(['big']);
    expect(last.objectGUID).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
  });
});
