/**
 * What porter tells an operator about its work, as plain calls with no metrics library behind
 * them: the core and the adapters call this interface, and one adapter (prometheus.ts) turns the
 * calls into Prometheus series. The default does nothing.
 */
import type { AdminCallEvent } from '../admin/client.js';
import type { ResourceName } from '../admin/resources.js';
import type { RecordAction, ResultStatus } from '../model/import.js';

/**
 * How one run of an import batch job ended: `done`, `paused` (its import is paused: it waits
 * for the cool-down), `interrupted` (the worker stopped: back to the queue), `failed` (it threw;
 * BullMQ retries it or gives it up).
 */
export type BatchOutcome = 'done' | 'paused' | 'interrupted' | 'failed';

/** What one batch did besides its records: counted once the batch ends. */
export interface BatchWork {
  resource?: ResourceName;
  /** Write calls sent again after a transient failure. */
  retries: number;
  /** Groups of records split in halves to find the records a server refuses or never answers. */
  splits: number;
  /** Reads made to settle what a refused or unanswered call applied. */
  reconcileReads: number;
}

export interface PorterMetrics {
  /** One request to the admin server ended (answered, refused or failed), after `durationMs`. */
  adminCall(event: AdminCallEvent): void;
  /** Records got their results. */
  records(
    resource: ResourceName,
    results: readonly { action?: RecordAction; status: ResultStatus }[],
  ): void;
  /** An import batch job ended. */
  batch(outcome: BatchOutcome, durationMs: number, work?: BatchWork): void;
  /** The circuit breaker paused an import. */
  breakerPaused(resource: ResourceName): void;
}

/** Metrics that go nowhere: the default of every part that takes metrics. */
export const NOOP_METRICS: PorterMetrics = {
  adminCall: () => {},
  records: () => {},
  batch: () => {},
  breakerPaused: () => {},
};
