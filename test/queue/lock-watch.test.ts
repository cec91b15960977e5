/** The lock watch: a job whose lock lapsed unrenewed is said once; a job this worker let go is not. */
import { EventEmitter } from 'node:events';
import type { Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { watchLocks } from '../../src/queue/lock-watch.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function watched(): { worker: EventEmitter; lapsed: string[][] } {
  const worker = new EventEmitter();
  const lapsed: string[][] = [];
  watchLocks(worker as unknown as Worker, {
    lockDurationMs: 1000,
    onLapsed: (jobIds) => lapsed.push(jobIds),
  });
  return { worker, lapsed };
}

describe('watchLocks', () => {
  it('says once that a running job was not renewed for a lock period', () => {
    const { worker, lapsed } = watched();
    worker.emit('active', { id: 'a' });
    vi.advanceTimersByTime(900);
    worker.emit('locksRenewed', { jobIds: ['a'] });
    vi.advanceTimersByTime(900);
    expect(lapsed).toEqual([]);
    vi.advanceTimersByTime(2000);
    expect(lapsed).toEqual([['a']]);
  });

  it('forgets a job whose end Redis refused (its lock forgotten), as one that completed', () => {
    const { worker, lapsed } = watched();
    worker.emit('active', { id: 'a' });
    worker.emit('active', { id: 'b' });
    worker.emit('error', new Error('Missing lock for job a. moveToFinished'));
    worker.emit('completed', { id: 'b' });
    // a failed renewal leaves the job to the worker's own lockRenewalFailed handling
    worker.emit('active', { id: 'c' });
    worker.emit('error', new Error('could not renew lock for job c'));
    vi.advanceTimersByTime(3000);
    expect(lapsed).toEqual([['c']]);
  });
});
