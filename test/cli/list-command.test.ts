/** `porter list` and GET /v1/imports: recent imports newest first, a page at a time. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import type { ImportInfo } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';

const TOKEN = 'list-token-0123456789';
let pipeline: Pipeline;
/** Oldest first. */
let ids: string[];

beforeAll(async () => {
  pipeline = await startPipeline();
  ids = [];
  for (const name of ['list.one', 'list.two', 'list.three']) {
    const { info } = await pipeline.run(csv(['username'], [[name]]), {
      resource: 'users',
      mode: 'upsert',
    });
    ids.push(info.id);
  }
});
afterAll(async () => {
  await pipeline?.close();
});

describe('porter list', () => {
  it('prints the newest imports first with state and counts, and the command of the next page', async () => {
    const first = await runPorter(['list', '--limit', '2'], pipeline.childEnv());
    expect(first.code).toBe(0);
    const lines = first.stdout.split('\n');
    expect(lines[0]).toMatch(/^id\s+state\s+target\s+by\s+resource\s+mode\s+records\s+ok\s+failed/);
    // by: who started it (here, no one porter knows: "-")
    expect(lines[1]).toMatch(
      new RegExp(`^${ids[2]}\\s+completed\\s+default\\s+\\S+\\s+users\\s+upsert\\s+1/1\\s+1\\s+0`),
    );
    expect(lines[2]).toMatch(new RegExp(`^${ids[1]}\\s+completed`));
    expect(first.stdout).not.toContain(ids[0]);
    const cursor = /more: porter list --limit 2 --cursor (\S+)/.exec(first.stdout)?.[1];
    expect(cursor).toBeDefined();

    const second = await runPorter(
      ['list', '--limit', '2', '--cursor', cursor!],
      pipeline.childEnv(),
    );
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(ids[0]);
    expect(second.stdout).not.toContain(ids[1]);
    expect(second.stdout).not.toContain('more:');
  });

  it('--json prints the page and the cursor of the next', async () => {
    const result = await runPorter(['list', '--limit', '2', '--json'], pipeline.childEnv());
    expect(result.code).toBe(0);
    const page = JSON.parse(result.stdout) as { imports: ImportInfo[]; next?: string };
    expect(page.imports.map((info) => info.id)).toEqual([ids[2], ids[1]]);
    expect(page.imports[0]).toMatchObject({ state: 'completed', counts: { succeeded: 1 } });
    const rest = await runPorter(['list', '--json', '--cursor', page.next!], pipeline.childEnv());
    const last = JSON.parse(rest.stdout) as { imports: ImportInfo[]; next?: string };
    expect(last.imports.map((info) => info.id)).toEqual([ids[0]]);
    expect(last.next).toBeUndefined();
  });

  it('refuses a cursor it did not give', async () => {
    const result = await runPorter(['list', '--cursor', 'not-a-cursor'], pipeline.childEnv());
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/cursor/);
  });
});

describe('GET /v1/imports', () => {
  it('pages with limit and cursor, the next page in the link header', async () => {
    const app = await buildApiApp({ context: pipeline.context, token: TOKEN });
    try {
      const headers = { authorization: `Bearer ${TOKEN}` };
      const first = await app.inject({ method: 'GET', url: '/v1/imports?limit=2', headers });
      expect(first.statusCode).toBe(200);
      expect((first.json() as ImportInfo[]).map((info) => info.id)).toEqual([ids[2], ids[1]]);
      const cursor = String(first.headers['x-next-cursor']);
      expect(first.headers.link).toBe(
        `</v1/imports?limit=2&cursor=${encodeURIComponent(cursor)}>; rel="next"`,
      );
      const next = /<([^>]+)>/.exec(String(first.headers.link))![1]!;
      const second = await app.inject({ method: 'GET', url: next, headers });
      expect((second.json() as ImportInfo[]).map((info) => info.id)).toEqual([ids[0]]);
      expect(second.headers.link).toBeUndefined();
      const all = await app.inject({ method: 'GET', url: '/v1/imports', headers });
      expect((all.json() as ImportInfo[]).map((info) => info.id)).toEqual([...ids].reverse());
    } finally {
      await app.close();
    }
  });
});
