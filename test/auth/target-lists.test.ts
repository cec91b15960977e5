/**
 * A token limited to some targets sees only their jobs and schedules in the lists
 * (`GET /v1/imports`, `/v1/exports`, `/v1/migrations`, `/v1/schedules`, `/v1/import-schedules`)
 * and is refused another target's schedule by name, while an unlimited token sees them all.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSchedule, startExport } from '../../src/app/exports.js';
import { addImportSchedule } from '../../src/app/import-schedules.js';
import { startMigration } from '../../src/app/migrations.js';
import { securityOf } from '../../src/app/security.js';
import type { Role } from '../../src/auth/roles.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { bundleText } from '../migrate/migrate-fixture.js';

let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let outDir: string;
let everywhere: string;
let elsewhere: string;

async function createToken(name: string, role: Role, targets?: string[]): Promise<string> {
  const created = await securityOf(pipeline.context).tokens.create(
    { name, role, targets },
    { at: new Date().toISOString(), actionId: name, who: { name: 'test' } },
  );
  return created.token;
}

beforeAll(async () => {
  pipeline = await startPipeline();
  outDir = await mkdtemp(join(tmpdir(), 'porter-target-lists-'));
  const { context } = pipeline;
  // one of each on the default target
  await pipeline.run(csv(['username', 'email'], [['listed', 'listed@x']]), {
    resource: 'users',
    mode: 'upsert',
  });
  await startExport(context, { resource: 'users', format: 'ndjson', outDir });
  await startMigration(context, {
    source: Readable.from([Buffer.from(await bundleText(pipeline.sandbox.url))]),
    fileName: 'bundle.json',
    options: { mode: 'upsert', dryRun: true, allowAdmin: false, batchSize: 5 },
  });
  await addSchedule(context, {
    name: 'yearly-export',
    cron: '0 0 1 1 *',
    resource: 'users',
    format: 'csv',
    outDir,
  });
  await addImportSchedule(context, {
    name: 'yearly-import',
    cron: '0 0 1 1 *',
    request: {
      file: join(outDir, 'users.csv'),
      options: {
        resource: 'users',
        mode: 'upsert',
        batchSize: 10,
        listSeparator: '|',
        emptyAsClear: false,
        allowAdmin: false,
      },
    },
  });
  app = await buildApiApp({ context });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  everywhere = await createToken('everywhere', 'viewer');
  elsewhere = await createToken('elsewhere', 'viewer', ['elsewhere']);
}, 60_000);
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

async function get(token: string, path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: await response.json() };
}

const LISTS = [
  '/v1/imports',
  '/v1/exports',
  '/v1/migrations',
  '/v1/schedules',
  '/v1/import-schedules',
];

describe('lists of a target-limited token', () => {
  it.each(LISTS)(
    '%s: an unlimited token sees the default target, a limited one does not',
    async (path) => {
      const all = await get(everywhere, path);
      expect(all.status).toBe(200);
      expect((all.body as unknown[]).length).toBeGreaterThan(0);
      const limited = await get(elsewhere, path);
      expect(limited.status).toBe(200);
      expect(limited.body).toEqual([]);
    },
  );

  it('another target schedule by name is refused', async () => {
    for (const path of ['/v1/schedules/yearly-export', '/v1/import-schedules/yearly-import']) {
      expect((await get(everywhere, path)).status, path).toBe(200);
      const refused = await get(elsewhere, path);
      expect(refused.status, path).toBe(403);
      expect(refused.body).toMatchObject({ error: { code: 'PORTER_FORBIDDEN' } });
    }
  });
});
