import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline();
});
afterAll(async () => {
  await pipeline?.close();
});

describe('users × every mode', () => {
  it('create POSTs new users and reports their ids; a second create of the same user fails ALREADY_EXISTS', async () => {
    const text = csv(
      ['username', 'firstName', 'email'],
      [
        ['ada', 'Ada', 'ada@example.com'],
        ['grace hopper', 'Grace', 'grace@example.com'],
      ],
    );
    const { info, results } = await pipeline.run(text, { resource: 'users', mode: 'create' });
    expect(info.state).toBe('completed');
    expect(results.map((r) => [r.row, r.key, r.action, r.status])).toEqual([
      [1, 'ada', 'create', 'succeeded'],
      [2, 'grace hopper', 'create', 'succeeded'],
    ]);
    const ada = (await pipeline.context.createAdminClient().listUsers({ username: 'ada' }))[0];
    expect(results[0]!.id).toBe(ada?.userId);

    const again = await pipeline.run(csv(['username'], [['ada']]), {
      resource: 'users',
      mode: 'create',
    });
    expect(again.info.state).toBe('completed_with_errors');
    expect(again.results[0]).toMatchObject({ status: 'failed', errorCode: 'ALREADY_EXISTS' });
  });

  it('upsert updates the existing user and creates the missing one', async () => {
    const text = csv(
      ['username', 'city'],
      [
        ['ada', 'London'],
        ['alan', 'Manchester'],
      ],
    );
    const { info, results } = await pipeline.run(text, { resource: 'users', mode: 'upsert' });
    expect(info.state).toBe('completed');
    expect(results.map((r) => [r.key, r.action, r.status])).toEqual([
      ['ada', 'update', 'succeeded'],
      ['alan', 'create', 'succeeded'],
    ]);
    const client = pipeline.context.createAdminClient();
    const [ada] = await client.listUsers({ username: 'ada' });
    expect(ada).toMatchObject({ city: 'London', firstName: 'Ada', email: 'ada@example.com' });
    await client.close();
  });

  it('update merges: columns absent from the upload and empty cells never erase a field', async () => {
    const text = csv(['username', 'dept', 'firstName'], [['ada', 'Engineering', '']]);
    const { results } = await pipeline.run(text, { resource: 'users', mode: 'update' });
    expect(results[0]).toMatchObject({ status: 'succeeded', action: 'update', changed: ['dept'] });
    const client = pipeline.context.createAdminClient();
    const [ada] = await client.listUsers({ username: 'ada' });
    expect(ada).toMatchObject({
      dept: 'Engineering',
      firstName: 'Ada',
      city: 'London',
      email: 'ada@example.com',
    });
    await client.close();
  });

  it('update with --empty-as-clear clears a string field given as an empty cell', async () => {
    const text = csv(['username', 'city'], [['ada', '']]);
    const { results } = await pipeline.run(text, {
      resource: 'users',
      mode: 'update',
      emptyAsClear: true,
    });
    expect(results[0]).toMatchObject({ status: 'succeeded', changed: ['city'] });
    const client = pipeline.context.createAdminClient();
    const [ada] = await client.listUsers({ username: 'ada' });
    expect(ada?.city ?? '').toBe('');
    expect(ada?.dept).toBe('Engineering');
    await client.close();
  });

  it('update of a missing user fails NOT_FOUND and sends nothing for it', async () => {
    const { info, results } = await pipeline.run(csv(['username', 'city'], [['nobody', 'Oslo']]), {
      resource: 'users',
      mode: 'update',
    });
    expect(info.state).toBe('completed_with_errors');
    expect(results[0]).toMatchObject({ status: 'failed', errorCode: 'NOT_FOUND', key: 'nobody' });
  });

  it('an unchanged record is succeeded with no field changed and no write call', async () => {
    const before = structuredClone(pipeline.sandbox.store.stats);
    const { results } = await pipeline.run(csv(['username', 'dept'], [['ada', 'Engineering']]), {
      resource: 'users',
      mode: 'upsert',
    });
    expect(results[0]).toMatchObject({ status: 'succeeded', action: 'unchanged', changed: [] });
    const after = structuredClone(pipeline.sandbox.store.stats);
    expect(after.requests.PUT).toBe(before.requests.PUT);
  });

  it('delete removes present users and skips absent ones, so deletes are idempotent', async () => {
    const text = csv(['username'], [['alan'], ['never-existed']]);
    const { info, results } = await pipeline.run(text, { resource: 'users', mode: 'delete' });
    expect(info.state).toBe('completed');
    expect(results.map((r) => [r.key, r.action, r.status])).toEqual([
      ['alan', 'delete', 'succeeded'],
      ['never-existed', 'delete', 'skipped'],
    ]);
    expect(results[1]!.error).toMatch(/not found/);
    const again = await pipeline.run(csv(['username'], [['alan']]), {
      resource: 'users',
      mode: 'delete',
    });
    expect(again.results[0]!.status).toBe('skipped');
  });
});
