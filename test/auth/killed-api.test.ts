/**
 * A `porter api` process killed in the middle of an upload leaves no action done without its
 * event: the import it created names its audit action (`actionId`), and the trail holds that
 * action's `intent`, written before the upload was taken.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { spawnApi, type ApiProcess } from '../helpers/api-process.js';
import { waitFor } from '../helpers/redis.js';

const TOKEN = 'killed-api-token-0123456789';
let pipeline: Pipeline;
let api: ApiProcess | undefined;

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
});
afterAll(async () => {
  if (api && api.child.exitCode === null && api.child.signalCode === null) api.child.kill();
  await api?.exited;
  await pipeline?.close();
});

describe('an API process killed mid-upload', () => {
  it('every import it created has the intent event of its action', async () => {
    api = await spawnApi({ ...pipeline.childEnv(), PORTER_API_TOKEN: TOKEN });
    const url = new URL('/v1/imports?resource=users&mode=upsert', await api.listening);
    // an upload that stays open: its first rows are sent, the rest never come
    const upload = request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
    });
    upload.on('error', () => {});
    upload.write(
      csv(
        ['username', 'email'],
        Array.from({ length: 500 }, (_, index) => [`killed.${index}`, `killed.${index}@x`]),
      ),
    );
    const [created] = await waitFor(
      async () => {
        const imports = await pipeline.context.store.list();
        return imports.length > 0 ? imports : undefined;
      },
      { what: 'the upload to create its import' },
    );
    expect(created!.state).toBe('receiving');
    api.child.kill('SIGKILL');
    expect(await api.exited).toBe('SIGKILL');
    upload.destroy();

    const imports = await pipeline.context.store.list();
    const events = await securityOf(pipeline.context).audit.read({ action: 'import.start' });
    for (const info of imports) {
      expect(info.actionId, info.id).toBeDefined();
      const ofAction = events.filter((event) => event.actionId === info.actionId);
      expect(ofAction.map((event) => event.phase)).toEqual(['intent']);
      expect(ofAction[0]!.who).toMatchObject({ name: 'token:PORTER_API_TOKEN', role: 'admin' });
    }
    expect(imports.map((info) => info.startedBy)).toEqual(['token:PORTER_API_TOKEN']);
  }, 60_000);
});
