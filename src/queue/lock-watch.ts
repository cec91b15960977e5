/**
 * Tells a worker that a running job's lock has lapsed while its link to Redis is down. BullMQ
 * learns of a lost lock only from Redis's answer to a renewal (`lockRenewalFailed`), which a
 * cut-off worker gets when its link comes back, long after another worker took the job over.
 * This keeps, per running job, when its lock was last set or renewed (the time the answer came,
 * so the lock truly lapsed by the time this says so), and a timer says so once the lock
 * duration has passed without renewal.
 */
import type { Worker } from 'bullmq';
import { lockLostJob } from '../redis/outage-log.js';

export interface LockWatchOptions {
  lockDurationMs: number;
  /** Called once per job whose lock lapsed unrenewed. */
  onLapsed: (jobIds: string[]) => void;
}

export interface LockWatch {
  /** Whether the watch said this job's lock lapsed (so a later `lockRenewalFailed` is not news). */
  said(jobId: string): boolean;
  close(): void;
}

export function watchLocks(worker: Worker, options: LockWatchOptions): LockWatch {
  const renewedAt = new Map<string, number>();
  const lapsed = new Set<string>();
  const forget = (jobId: string | undefined): void => {
    if (jobId === undefined) return;
    renewedAt.delete(jobId);
    // a job id comes back when a batch runs again here: said once per run
    lapsed.delete(jobId);
  };
  worker.on('active', (job) => {
    if (job.id !== undefined) renewedAt.set(job.id, Date.now());
  });
  worker.on('locksRenewed', ({ jobIds }: { jobIds: string[] }) => {
    const now = Date.now();
    for (const jobId of jobIds) if (renewedAt.has(jobId)) renewedAt.set(jobId, now);
  });
  worker.on('completed', (job) => forget(job.id));
  worker.on('failed', (job) => forget(job?.id));
  // a job whose end Redis refused (its lock was forgotten, as after a rolled-back AOF) is no
  // longer this worker's, though it neither completed nor failed here
  worker.on('error', (error: Error) => {
    const lost = lockLostJob(error);
    if (lost?.kind === 'finish') forget(lost.job);
  });
  const timer = setInterval(
    () => {
      const now = Date.now();
      const found: string[] = [];
      for (const [jobId, at] of renewedAt) {
        if (now - at > options.lockDurationMs && !lapsed.has(jobId)) {
          lapsed.add(jobId);
          found.push(jobId);
        }
      }
      if (found.length > 0) options.onLapsed(found);
    },
    Math.max(50, Math.round(options.lockDurationMs / 4)),
  );
  timer.unref();
  return {
    said: (jobId) => lapsed.has(jobId),
    close: () => clearInterval(timer),
  };
}
