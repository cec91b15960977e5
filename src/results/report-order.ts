/** Orders for reports that still stream: nothing is held in memory, the store is read twice. */
import type { RecordResult, ResultStatus } from '../model/import.js';

/** Reads results with the given statuses in input order, e.g. `(status) => store.results(id, { status })`. */
export type ResultReader = (status: readonly ResultStatus[]) => AsyncIterable<RecordResult>;

/** Failed and unprocessed results first, then succeeded and skipped, each part in input order. */
export async function* failedFirst(read: ResultReader): AsyncGenerator<RecordResult> {
  yield* read(['failed', 'unprocessed']);
  yield* read(['succeeded', 'skipped']);
}
