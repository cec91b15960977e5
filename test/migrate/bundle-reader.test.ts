import { describe, expect, it } from 'vitest';
import { readBundle, type BundlePart } from '../../src/migrate/bundle-reader.js';

const group = (id: number) => ({ id, name: `g${id}`, description: 'a "quoted" ] } text' });
const user = (userId: number) => ({ userId, username: `u${userId}`, groups: [1] });
const acl = (n: number) => ({ id: `0_1_${n}`, groupId: 1, name: `acl ${n}`, workspaces: [] });

function bundle(extra = ''): string {
  return JSON.stringify(
    {
      porter: 'bundle',
      version: 1,
      exportedAt: '2026-01-31T02:00:00.123Z',
      source: 'http://old.example.com',
      porterVersion: '0.1.0',
      groups: [group(1), group(2)],
      users: Array.from({ length: 50 }, (_, index) => user(index + 1)),
      acls: [acl(1)],
    },
    null,
    extra,
  );
}

/** The document cut into pieces of `size` bytes. */
async function* pieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let start = 0; start < bytes.length; start += size) {
    yield bytes.subarray(start, start + size);
  }
}

async function read(text: string, size: number): Promise<BundlePart[]> {
  const parts: BundlePart[] = [];
  for await (const part of readBundle(pieces(text, size))) parts.push(part);
  return parts;
}

async function refusal(text: string): Promise<string> {
  try {
    await read(text, 7);
  } catch (error) {
    return `${(error as { code?: string }).code}: ${(error as Error).message}`;
  }
  throw new Error('the bundle was accepted');
}

describe('readBundle', () => {
  it('gives every record and the head, however the bytes are cut', async () => {
    for (const text of [bundle(), bundle('  ')]) {
      for (const size of [1, 3, 64, 1 << 16]) {
        const parts = await read(text, size);
        const records = (resource: string) =>
          parts.flatMap((part) =>
            part.kind === 'records' && part.resource === resource ? part.records : [],
          );
        expect(records('groups')).toEqual([group(1), group(2)]);
        expect(records('users')).toHaveLength(50);
        expect(records('users')[49]).toEqual(user(50));
        expect(records('acls')).toEqual([acl(1)]);
        expect(parts.at(-1)).toEqual({
          kind: 'end',
          head: {
            exportedAt: '2026-01-31T02:00:00.123Z',
            source: 'http://old.example.com',
            porterVersion: '0.1.0',
          },
        });
      }
    }
  });

  it('refuses what is not a bundle of version 1, saying why', async () => {
    expect(await refusal('[]')).toMatch(/PORTER_INPUT_UNREADABLE: .*not a JSON object/);
    expect(await refusal(bundle().replace('"version":1', '"version":2'))).toMatch(
      /"version" is 2, not 1/,
    );
    expect(await refusal(bundle().replace('"porter":"bundle"', '"porter":"other"'))).toMatch(
      /"porter" is not "bundle"/,
    );
    expect(await refusal(bundle().replace('"source"', '"extra":1,"source"'))).toMatch(
      /unknown field "extra"/,
    );
    expect(await refusal(bundle().slice(0, -40))).toMatch(/ends before it is complete/);
    expect(await refusal(bundle().replace('"userId":7,', ''))).toMatch(/a record of "users"/);
    expect(
      await refusal(bundle().replace(',"acls":[', ',"acls":{').replace(/\]\}$/, '}}')),
    ).toMatch(/"acls" is not an array/);
    expect(await refusal(`${bundle()} {}`)).toMatch(/after the document's end/);
    expect(await refusal(bundle().replace(/,"acls":\[.*\]\}$/, '}'))).toMatch(/"acls" is missing/);
  });
});
