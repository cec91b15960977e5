/**
 * The Prometheus adapter of porter's metrics: turns the calls of `PorterMetrics` into counters
 * and histograms of one registry per process (never prom-client's global one, so several can live
 * in one process), and reads queue depths and import and export states from Redis when scraped.
 */
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
} from 'prom-client';
import type { AdminCallEvent } from '../admin/client.js';
import type { ResourceName } from '../admin/resources.js';
import type { ExportState } from '../export/export-types.js';
import type { ImportState, RecordAction, ResultStatus } from '../model/import.js';
import type { BatchOutcome, BatchWork, PorterMetrics } from './metrics.js';

/** A queue whose job counts are read on each scrape (BullMQ's Queue has this method). */
export interface CountedQueue {
  readonly name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

/** Where the scrape-time figures come from; each part is optional. */
export interface MetricSources {
  queues?: readonly CountedQueue[];
  imports?: { countStates(limit?: number): Promise<Map<string, number>> };
  exports?: { countStates(limit?: number): Promise<Map<string, number>> };
}

export interface PrometheusOptions {
  /** Process metrics (CPU, memory, event loop lag, …) of prom-client. @defaultValue true */
  defaultMetrics?: boolean;
  /** How long a scrape waits for Redis before leaving a figure out. @defaultValue 2000 */
  collectTimeoutMs?: number;
  /** Imports and exports, newest first, whose states are counted. @defaultValue 1000 */
  stateWindow?: number;
}

/** Every state, so each has a series from the first scrape (a new state fails to compile here). */
const IMPORT_STATES = Object.keys({
  receiving: true,
  queued: true,
  running: true,
  paused: true,
  held: true,
  completed: true,
  completed_with_errors: true,
  failed: true,
  cancelled: true,
} satisfies Record<ImportState, true>);
const EXPORT_STATES = Object.keys({
  queued: true,
  running: true,
  completed: true,
  failed: true,
} satisfies Record<ExportState, true>);

/** Queue states reported as depth. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'paused'] as const;

const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const BATCH_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export class PrometheusMetrics implements PorterMetrics {
  readonly registry = new Registry();
  private sources: MetricSources = {};
  private readonly collectTimeoutMs: number;
  private readonly stateWindow: number;
  private readonly recordsTotal: Counter<'resource' | 'action' | 'status'>;
  private readonly adminCalls: Counter<'method' | 'resource' | 'outcome'>;
  private readonly adminCallSeconds: Histogram<'method' | 'resource' | 'outcome'>;
  private readonly rateLimited: Counter<'resource'>;
  private readonly breakerPauses: Counter<'resource'>;
  private readonly batchSeconds: Histogram<'resource' | 'outcome'>;
  private readonly retries: Counter<'resource'>;
  private readonly splits: Counter<'resource'>;
  private readonly reconcileReads: Counter<'resource'>;

  constructor(options: PrometheusOptions = {}) {
    this.collectTimeoutMs = options.collectTimeoutMs ?? 2_000;
    this.stateWindow = options.stateWindow ?? 1_000;
    const registers = [this.registry];
    const counter = <L extends string>(config: CounterConfiguration<L>): Counter<L> =>
      new Counter({ ...config, registers });
    this.recordsTotal = counter({
      name: 'porter_records_total',
      help: 'Records that got their result, by resource, action and status',
      labelNames: ['resource', 'action', 'status'],
    });
    this.adminCalls = counter({
      name: 'porter_admin_calls_total',
      help: 'Requests to the admin server, by method, resource and outcome',
      labelNames: ['method', 'resource', 'outcome'],
    });
    this.adminCallSeconds = new Histogram({
      name: 'porter_admin_call_duration_seconds',
      help: 'Duration of requests to the admin server, from sending to the answer read whole',
      labelNames: ['method', 'resource', 'outcome'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.rateLimited = counter({
      name: 'porter_admin_rate_limited_total',
      help: 'Answers 429 (too many requests) from the admin server',
      labelNames: ['resource'],
    });
    this.breakerPauses = counter({
      name: 'porter_breaker_pauses_total',
      help: 'Imports paused by the circuit breaker (the admin server failed too many calls)',
      labelNames: ['resource'],
    });
    this.batchSeconds = new Histogram({
      name: 'porter_batch_duration_seconds',
      help: 'Duration of import batch job runs, by resource and outcome',
      labelNames: ['resource', 'outcome'],
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.retries = counter({
      name: 'porter_retries_total',
      help: 'Write calls sent again after a transient failure',
      labelNames: ['resource'],
    });
    this.splits = counter({
      name: 'porter_splits_total',
      help: 'Groups of records split in halves to isolate a refused or unanswered record',
      labelNames: ['resource'],
    });
    this.reconcileReads = counter({
      name: 'porter_reconcile_reads_total',
      help: 'Reads made to settle what a refused or unanswered write applied',
      labelNames: ['resource'],
    });
    this.defineScrapeGauges();
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Sets where queue depths and states are read from at scrape time. */
  watch(sources: MetricSources): void {
    this.sources = sources;
  }

  /** The text a scrape answers, and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  adminCall(event: AdminCallEvent): void {
    const labels = { method: event.method, resource: event.resource, outcome: event.outcome };
    this.adminCalls.inc(labels);
    this.adminCallSeconds.observe(labels, event.durationMs / 1000);
    if (event.outcome === 'rate_limited') this.rateLimited.inc({ resource: event.resource });
  }

  records(
    resource: ResourceName,
    results: readonly { action?: RecordAction; status: ResultStatus }[],
  ): void {
    const tally = new Map<string, number>();
    for (const result of results) {
      const key = `${result.action ?? 'none'}\u0000${result.status}`;
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    for (const [key, count] of tally) {
      const [action, status] = key.split('\u0000') as [string, string];
      this.recordsTotal.inc({ resource, action, status }, count);
    }
  }

  batch(outcome: BatchOutcome, durationMs: number, work?: BatchWork): void {
    const resource = work?.resource ?? 'unknown';
    this.batchSeconds.observe({ resource, outcome }, durationMs / 1000);
    if (!work) return;
    if (work.retries > 0) this.retries.inc({ resource }, work.retries);
    if (work.splits > 0) this.splits.inc({ resource }, work.splits);
    if (work.reconcileReads > 0) this.reconcileReads.inc({ resource }, work.reconcileReads);
  }

  breakerPaused(resource: ResourceName): void {
    this.breakerPauses.inc({ resource });
  }

  /** Gauges read from Redis on each scrape; a source that does not answer in time is left out. */
  private defineScrapeGauges(): void {
    const registers = [this.registry];
    const within = <T>(work: Promise<T>): Promise<T> => {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), this.collectTimeoutMs);
      });
      return Promise.race([work, expired]).finally(() => clearTimeout(timer));
    };
    const sources = (): MetricSources => this.sources;
    const stateWindow = this.stateWindow;
    new Gauge({
      name: 'porter_queue_jobs',
      help: 'Jobs in each BullMQ queue by state (waiting, active, delayed, failed, paused)',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        this.reset();
        for (const queue of sources().queues ?? []) {
          try {
            const counts = await within(queue.getJobCounts(...QUEUE_STATES));
            for (const state of QUEUE_STATES) {
              this.set({ queue: queue.name, state }, counts[state] ?? 0);
            }
          } catch {
            // Redis does not answer: the series are absent from this scrape
          }
        }
      },
    });
    const stateGauge = (
      name: string,
      what: 'imports' | 'exports',
      states: readonly string[],
    ): void => {
      new Gauge({
        name,
        help: `${what === 'imports' ? 'Imports' : 'Exports'} by state, among the ${stateWindow} newest`,
        labelNames: ['state'],
        registers,
        async collect() {
          this.reset();
          const source = sources()[what];
          if (!source) return;
          try {
            const counts = await within(source.countStates(stateWindow));
            // every state has a series, 0 included, so a graph or an alert never sees a gap
            for (const state of new Set([...states, ...counts.keys()])) {
              this.set({ state }, counts.get(state) ?? 0);
            }
          } catch {
            // Redis does not answer: the series are absent from this scrape
          }
        },
      });
    };
    stateGauge('porter_imports', 'imports', IMPORT_STATES);
    stateGauge('porter_exports', 'exports', EXPORT_STATES);
  }
}

/** Prometheus metrics of one process, reading the queues and stores of a porter context. */
export function createPrometheusMetrics(options: PrometheusOptions = {}): PrometheusMetrics {
  return new PrometheusMetrics(options);
}
