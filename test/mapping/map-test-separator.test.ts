/**
 * `porter map test` reads lists in a cell as the import would: its flag, else the mapping's
 * `listSeparator`, else `|`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPorter } from '../helpers/porter-cli.js';

describe('porter map test and list separators', () => {
  let dir: string;
  let file: string;
  let mapping: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'porter-map-separator-'));
    file = join(dir, 'feed.csv');
    mapping = join(dir, 'mapping.json');
    await writeFile(file, 'username,groups\nann,"Staff,Sales"\n');
    await writeFile(mapping, JSON.stringify({ listSeparator: ',' }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const groupsOf = async (extra: string[]): Promise<unknown> => {
    const run = await runPorter(
      ['map', 'test', file, '--map', mapping, '--format', 'json', ...extra],
      {},
    );
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { rows: { output?: { groups?: unknown } }[] };
    return result.rows[0]?.output?.groups;
  };

  it("takes the mapping's separator when the flag is not given", async () => {
    expect(await groupsOf([])).toEqual(['Staff', 'Sales']);
  });

  it("takes the flag over the mapping's", async () => {
    expect(await groupsOf(['--list-separator', ';'])).toEqual(['Staff,Sales']);
  });
});
