import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryImport } from '../../src/app/imports.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { OPTIONS } from '../results/store-fixture.js';

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline({ env: { PORTER_MAX_ATTEMPTS: '2' } });
});
afterAll(async () => {
  await pipeline?.close();
});

describe('porter retry', () => {
  it('starts a new import of exactly the failed and unprocessed records, with their original rows', async () => {
    const client = pipeline.context.createAdminClient();
    await client.postGroups([{ name: 'Retry Team' }]);
    // rows 2 and 4 name a group that does not exist yet; the server refuses everything for row 5's batch
    const text = csv(
      ['Login', 'Teams'],
      [
        ['retry.one', 'Retry Team'],
        ['retry.two', 'Later Team'],
        ['retry.three', ''],
        ['retry.four', 'Later Team'],
      ],
    );
    const mapping = { columns: { Login: 'username', Teams: 'groups' }, ignore: [], defaults: {} };
    const first = await pipeline.run(text, { resource: 'users', mode: 'upsert' }, { mapping });
    expect(first.results.map((r) => r.status)).toEqual([
      'succeeded',
      'failed',
      'succeeded',
      'failed',
    ]);

    await client.postGroups([{ name: 'Later Team' }]);
    const { import: retry } = await retryImport(pipeline.context, first.info.id);
    expect(retry).toMatchObject({ retryOf: first.info.id, total: 2 });
    const final = await pipeline.waitFinal(retry.id);
    expect(final.state).toBe('completed');
    const results = await pipeline.results(retry.id);
    expect(results.map((r) => [r.row, r.sourceRow, r.key, r.status])).toEqual([
      [1, 2, 'retry.two', 'succeeded'],
      [2, 4, 'retry.four', 'succeeded'],
    ]);
    const [later] = await client.listGroups({ name: 'Later Team' });
    expect(later?.users).toHaveLength(2);
    await client.close();
  });

  it('a record the retried import sent, that may have landed, is looked up: found, it is this import’s own', async () => {
    // the first import's call went out and no answer came: its record ends unprocessed
    pipeline.sandbox.setFaults({ failRate: 1 });
    // look-alikes allowed: the import goes to its batch without first reading every key
    const first = await pipeline.run(csv(['username'], [['retry.landed'], ['retry.other']]), {
      resource: 'users',
      mode: 'create',
      allowLookalike: true,
    });
    pipeline.sandbox.setFaults({ failRate: 0 });
    expect(first.results.map((r) => r.status)).toEqual(['unprocessed', 'unprocessed']);
    // as if that call had landed: its row is in the send journal and the user exists
    await pipeline.context.journal.markSent(first.info.id, [1]);
    const client = pipeline.context.createAdminClient();
    const [landed] = await client.postUsers([{ username: 'retry.landed' }]);
    await client.postUsers([{ username: 'retry.other' }]); // someone else's, not sent by porter
    await client.close();

    const { import: retry } = await retryImport(pipeline.context, first.info.id);
    await pipeline.waitFinal(retry.id);
    const results = await pipeline.results(retry.id);
    expect(results.map((r) => [r.key, r.status, r.errorCode])).toEqual([
      ['retry.landed', 'succeeded', undefined],
      ['retry.other', 'failed', 'ALREADY_EXISTS'],
    ]);
    expect(results[0]!.id).toBe(landed!.userId);
  });

  it('refuses an import with nothing to retry, and one still running', async () => {
    const done = await pipeline.run(csv(['username'], [['retry.clean']]), {
      resource: 'users',
      mode: 'upsert',
    });
    await expect(retryImport(pipeline.context, done.info.id)).rejects.toMatchObject({
      code: 'PORTER_INPUT_EMPTY',
    });
    // an import still receiving its upload has not ended: nothing to retry yet
    const receiving = await pipeline.context.store.create({ options: OPTIONS });
    await expect(retryImport(pipeline.context, receiving.id)).rejects.toMatchObject({
      code: 'PORTER_CONFLICT',
      message: expect.stringMatching(/still receiving/),
    });
  });
});
