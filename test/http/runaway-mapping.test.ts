/**
 * A hostile mapping over HTTP: the API process keeps answering (`/healthz`) while a preview or
 * an import evaluates an expression that would run for ever, and the rows it stopped fail.
 * The API is a real process: a thread held by an expression would hold it, not this test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnApi, type ApiProcess } from '../helpers/api-process.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const TOKEN = 'runaway-api-token-0123456789';
/** How long one /healthz may take before the API counts as frozen: far beyond any load. */
const HEALTH_DEADLINE_MS = 15_000;

let pipeline: Pipeline;
let api: ApiProcess | undefined;
let base: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  api = await spawnApi({ ...pipeline.childEnv(), PORTER_API_TOKEN: TOKEN });
  base = await api.listening;
});
afterAll(async () => {
  if (api && api.child.exitCode === null && api.child.signalCode === null) api.child.kill();
  await api?.exited;
  await pipeline?.close();
});

const mapping = JSON.stringify({
  fields: {
    username: "'runaway' & $string($row)",
    position: "$contains(firstName, /a*a*a*a*a*a*a*a*a*b/) ? 'yes' : 'no'",
  },
});
const upload = `firstName\n${Array.from({ length: 4 }, () => `${'a'.repeat(5000)}c`).join('\n')}\n`;

function form(): FormData {
  const body = new FormData();
  body.append('resource', 'users');
  body.append('mode', 'upsert');
  body.append('mapping', mapping);
  body.append('file', new Blob([upload], { type: 'text/csv' }), 'hostile.csv');
  return body;
}

/** Asks /healthz until `work` settles; each answer must come before the deadline. */
async function healthWhile<T>(work: Promise<T>): Promise<{ result: T; answered: number }> {
  let settled = false;
  const result = work.finally(() => {
    settled = true;
  });
  let answered = 0;
  while (!settled) {
    const response = await fetch(`${base}/healthz`, {
      signal: AbortSignal.timeout(HEALTH_DEADLINE_MS),
    });
    expect(response.status).toBe(200);
    answered++;
  }
  return { result: await result, answered };
}

describe('a hostile mapping over HTTP', () => {
  it('a preview: /healthz answers throughout, and the stopped rows fail', async () => {
    const preview = fetch(`${base}/v1/previews`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: form(),
    }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const { result, answered } = await healthWhile(preview);
    expect(result.status).toBe(200);
    const text = JSON.stringify(result.body);
    expect(text).toContain('the expression ran for more than 1000 ms and was stopped');
    expect(text).toContain('not evaluated: the expression went past its bounds on rows 1, 2, 3');
    expect(answered).toBeGreaterThan(1);
  });

  it('an import: /healthz answers throughout, and the stopped rows fail', async () => {
    const started = fetch(`${base}/v1/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: form(),
    }).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as { id: string },
    }));
    const { result, answered } = await healthWhile(started);
    expect(result.status).toBe(202);
    expect(answered).toBeGreaterThan(1);
    const info = await pipeline.waitFinal(result.body.id);
    expect(info.counts.failed).toBe(4);
    const results = await pipeline.results(result.body.id);
    expect(results.map((row) => row.key)).toEqual(['runaway1', 'runaway2', 'runaway3', 'runaway4']);
    expect(results[0]!.error).toContain('the expression ran for more than 1000 ms and was stopped');
  });
});
