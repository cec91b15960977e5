/**
 * A large import's batch jobs carry several calls' worth of records: BullMQ, the batch's reads
 * and its result writes are paid once per job, while every call still carries `batchSize`
 * records, one result per record, and the failure limit stops the next call of the same job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  batchRefs,
  CALLS_PER_JOB,
  JOBS_BEFORE_LARGER,
  recordsPerJob,
} from '../../src/queue/import-queue.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

describe('records per batch job', () => {
  it('is one call of a small import, up to CALLS_PER_JOB calls of a large one', () => {
    expect(recordsPerJob(50, 100)).toBe(100);
    expect(recordsPerJob(JOBS_BEFORE_LARGER * 100 - 1, 100)).toBe(100);
    expect(recordsPerJob(JOBS_BEFORE_LARGER * 100 * 2, 100)).toBe(200);
    expect(recordsPerJob(1_000_000, 100)).toBe(100 * CALLS_PER_JOB);
  });

  it('cuts the staged records into jobs that cover each of them once, in order', () => {
    const staged = JOBS_BEFORE_LARGER * 3 * 7 + 5;
    const refs = [...batchRefs('imp', staged, 7)];
    expect(refs[0]).toEqual({ importId: 'imp', batchIndex: 0, start: 0, count: 21 });
    expect(refs.map((ref) => ref.batchIndex)).toEqual(refs.map((_, index) => index));
    expect(refs.reduce((sum, ref) => sum + ref.count, 0)).toBe(staged);
    refs.slice(1).forEach((ref, index) => {
      expect(ref.start).toBe(refs[index]!.start + refs[index]!.count);
    });
  });
});

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline({ workerOptions: { concurrency: 1 } });
});
afterAll(async () => {
  await pipeline?.close();
});

/** Enough rows of two records per call for jobs of CALLS_PER_JOB calls. */
const ROWS = JOBS_BEFORE_LARGER * CALLS_PER_JOB * 2;

describe('an import whose jobs carry several calls', () => {
  it('sends calls of batchSize records and gives every record its result, in order', async () => {
    expect(recordsPerJob(ROWS, 2)).toBe(2 * CALLS_PER_JOB);
    const postsBefore = pipeline.sandbox.store.stats.requests.POST ?? 0;
    const rows = Array.from({ length: ROWS }, (_, index) => [`jobs.user${index + 1}`]);
    const { info, results } = await pipeline.run(csv(['username'], rows), {
      resource: 'users',
      mode: 'create',
      batchSize: 2,
    });
    expect(info.state).toBe('completed');
    expect(results.map((result) => result.row)).toEqual(rows.map((_, index) => index + 1));
    expect(new Set(results.map((result) => result.status))).toEqual(new Set(['succeeded']));
    expect((pipeline.sandbox.store.stats.requests.POST ?? 0) - postsBefore).toBe(ROWS / 2);
    expect((await pipeline.context.runtime.calls(info.id)).writeCalls).toBe(ROWS / 2);
  });

  it('stops the next call of the same job once --max-failures is passed', async () => {
    const postsBefore = pipeline.sandbox.store.stats.requests.POST ?? 0;
    // rows 3 and 4, the second call of the first job, name a group that does not exist
    const rows = Array.from({ length: ROWS }, (_, index) => [
      `jobs.limit${index + 1}`,
      index === 2 || index === 3 ? '#987654' : '',
    ]);
    const { info, results } = await pipeline.run(csv(['username', 'groups'], rows), {
      resource: 'users',
      mode: 'create',
      batchSize: 2,
      maxFailures: '1',
    });
    expect(info.state).toBe('failed');
    const byStatus = (status: string): number[] =>
      results.filter((result) => result.status === status).map((result) => result.row);
    expect(byStatus('succeeded')).toEqual([1, 2]);
    expect(byStatus('failed')).toEqual([3, 4]);
    expect(byStatus('unprocessed')).toHaveLength(ROWS - 4);
    // the first call, the refused one and its two halves: nothing of the job's later calls
    expect((pipeline.sandbox.store.stats.requests.POST ?? 0) - postsBefore).toBe(4);
    const names = pipeline.sandbox.store.users().map((user) => user.username);
    expect(names.filter((name) => name?.startsWith('jobs.limit')).sort()).toEqual([
      'jobs.limit1',
      'jobs.limit2',
    ]);
  });
});
