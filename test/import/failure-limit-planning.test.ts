/**
 * A batch whose own planning reaches --max-failures sends nothing: the stop is checked before
 * each call leaves, after the batch has recorded what planning refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline({ workerOptions: { concurrency: 1 } });
});
afterAll(async () => {
  await pipeline?.close();
});

describe('--max-failures reached while a batch plans', () => {
  it("stops that batch's own call and every later one", async () => {
    const postsBefore = pipeline.sandbox.store.stats.requests.POST ?? 0;
    // rows 1-5 ask for administrators, which the guard refuses without asking the server
    const rows = Array.from({ length: 20 }, (_, index) => [
      `limit.plan${index + 1}`,
      index < 5 ? 'Global Administrator' : 'General User',
    ]);
    const { info, results } = await pipeline.run(csv(['username', 'type'], rows), {
      resource: 'users',
      mode: 'create',
      batchSize: 10,
      maxFailures: '3',
    });
    expect(info.state).toBe('failed');
    expect(results.filter((result) => result.status === 'failed').map((r) => r.row)).toEqual([
      1, 2, 3, 4, 5,
    ]);
    const unprocessed = results.filter((result) => result.status === 'unprocessed');
    expect(unprocessed.map((result) => result.row)).toEqual(
      Array.from({ length: 15 }, (_, index) => index + 6),
    );
    expect(new Set(unprocessed.map((result) => result.errorCode))).toEqual(
      new Set(['PORTER_FAILURE_LIMIT']),
    );
    expect(pipeline.sandbox.store.stats.requests.POST ?? 0).toBe(postsBefore);
    // rows never sent are not in the send journal: a retry of them is a plain first send
    const rowsOfBatchOne = Array.from({ length: 10 }, (_, index) => index + 1);
    expect(await pipeline.context.journal.sentAmong(info.id, rowsOfBatchOne)).toEqual([]);
    const names = pipeline.sandbox.store.users().map((user) => user.username);
    expect(names.filter((name) => name?.startsWith('limit.plan'))).toEqual([]);
  });
});
