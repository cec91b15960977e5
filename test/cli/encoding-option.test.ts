/**
 * `--encoding` on every command that reads a file, and `encoding` over HTTP: Excel's
 * windows-1252 CSV is imported with its accents; read as UTF-8 it is refused, naming the option.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';

const TOKEN = 'encoding-token-0123456789';
let pipeline: Pipeline;
let app: FastifyInstance;
let dir: string;
let excel: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
  dir = await mkdtemp(join(tmpdir(), 'porter-encoding-'));
  excel = join(dir, 'excel.csv');
  await writeFile(excel, Buffer.from('username;firstName\ngarcia;María\n', 'latin1'));
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

function firstName(username: string): unknown {
  return pipeline.sandbox.store.users().find((user) => user.username === username)?.firstName;
}

describe('--encoding', () => {
  it('porter import reads windows-1252 when named; as UTF-8 it is refused naming the option', async () => {
    const refused = await runPorter(
      ['import', excel, '--resource', 'users', '--mode', 'create', '--wait'],
      pipeline.childEnv(),
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--encoding windows-1252');
    const read = await runPorter(
      [
        ...['import', excel, '--resource', 'users', '--mode', 'upsert', '--wait'],
        ...['--encoding', 'windows-1252'],
      ],
      pipeline.childEnv(),
    );
    expect(read.code, read.stderr).toBe(0);
    expect(firstName('garcia')).toBe('María');
  });

  it('porter map test takes it too; an unknown one is exit 64', async () => {
    const mapping = join(dir, 'mapping.json');
    await writeFile(mapping, JSON.stringify({ columns: {} }));
    const shown = await runPorter(
      ['map', 'test', excel, '--map', mapping, '--encoding', 'latin1', '--format', 'json'],
      pipeline.childEnv(),
    );
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('María');
    const unknown = await runPorter(
      [...['import', excel, '--resource', 'users', '--mode', 'create'], '--encoding', 'ebcdic-x'],
      pipeline.childEnv(),
    );
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toMatch(/--encoding: "ebcdic-x" is not an encoding/);
  });

  it('every command that reads a file offers it', async () => {
    for (const command of [['import'], ['sync'], ['watch'], ['schedule', 'add'], ['map', 'test']]) {
      const help = await runPorter([...command, '--help'], pipeline.childEnv());
      expect(help.stdout, command.join(' ')).toContain('--encoding <name>');
    }
  });
});

describe('encoding over HTTP', () => {
  it('a raw CSV body with encoding=windows-1252 is read; an unknown encoding is 400', async () => {
    const post = (encoding: string) =>
      app.inject({
        method: 'POST',
        url: `/v1/imports?resource=users&mode=upsert&encoding=${encoding}`,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
        payload: Buffer.from('username;firstName\nnunez;Núñez\n', 'latin1'),
      });
    const accepted = await post('windows-1252');
    expect(accepted.statusCode, accepted.body).toBe(202);
    const info = await pipeline.waitFinal((accepted.json() as { id: string }).id);
    expect(info).toMatchObject({ state: 'completed', options: { encoding: 'windows-1252' } });
    expect(firstName('nunez')).toBe('Núñez');
    const unknown = await post('klingon');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({
      error: { code: 'PORTER_USAGE', message: expect.stringContaining('encoding') },
    });
  });
});
