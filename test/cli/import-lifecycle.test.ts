import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter, type CliResult } from '../helpers/porter-cli.js';

let pipeline: Pipeline;

beforeAll(async () => {
  // no workers: queued batches wait until the test starts some
  pipeline = await startPipeline({ workers: false });
});
afterAll(async () => {
  await pipeline?.close();
});

function porter(args: string[]): Promise<CliResult> {
  return runPorter(args, pipeline.childEnv());
}

describe('porter cancel, resume and retry', () => {
  it('cancel ends a queued import; resume refuses it; retry starts a new import of its records and --wait follows it', async () => {
    const submitted = await pipeline.submit(csv(['username'], [['life.one'], ['life.two']]), {
      resource: 'users',
      mode: 'create',
    });

    const cancelled = await porter(['cancel', submitted.id]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toMatch(
      new RegExp(
        `import ${submitted.id} cancelled.*2 records, 0 succeeded, 0 failed, 0 skipped, 2 unprocessed`,
      ),
    );

    const resumed = await porter(['resume', submitted.id]);
    expect(resumed.code).toBe(65);
    expect(resumed.stderr).toMatch(/\[PORTER_CONFLICT\]/);

    pipeline.startWorkers();
    const retried = await porter(['retry', submitted.id, '--wait']);
    expect(retried.code).toBe(0);
    const retryId = retried.stdout.trim();
    expect(retryId).toMatch(/^imp_\w+$/);
    expect(retried.stderr).toMatch(/completed: 2 records, 2 succeeded/);
    expect(await pipeline.context.store.get(retryId)).toMatchObject({ retryOf: submitted.id });
    expect(
      pipeline.sandbox.store
        .users()
        .map((user) => user.username)
        .sort(),
    ).toEqual(['life.one', 'life.two']);

    const unknown = await porter(['cancel', 'imp_doesnotexist']);
    expect(unknown.code).toBe(66);
    expect(unknown.stderr).toMatch(/\[PORTER_NOT_FOUND\]/);
  });
});
