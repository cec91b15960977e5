/** A batch given up: its rows without a result are reported unprocessed, with the reason. */
import type { BatchDeps, BatchRef } from './run-batch.js';

/**
 * Gives every row of a batch that has no result the result `unprocessed`, with the reason. A
 * row the send journal shows was handed to the server is said to be possibly applied.
 */
export async function abandonBatch(
  ref: BatchRef,
  reason: { errorCode: string; error: string },
  deps: Pick<BatchDeps, 'store' | 'journal' | 'metrics'>,
): Promise<void> {
  const staged = await deps.store.readStaged(ref.importId, ref.start, ref.count);
  const missing = new Set(
    await deps.store.missingRows(
      ref.importId,
      staged.map((record) => record.row),
    ),
  );
  const unsent = staged.filter((record) => missing.has(record.row));
  const sent = new Set(
    await deps.journal.sentAmong(
      ref.importId,
      unsent.map((record) => record.row),
    ),
  );
  const results = unsent.map((record) => ({
    row: record.row,
    line: record.line,
    sourceRow: record.sourceRow,
    status: 'unprocessed' as const,
    errorCode: reason.errorCode,
    error: sent.has(record.row)
      ? `${reason.error.replace(/^not sent: /, '')}; it was sent before and may have been applied: porter retry looks it up first`
      : reason.error,
    attempts: 0,
    input: record.input,
    ...(record.serverOnly ? { serverOnly: true } : {}),
  }));
  if (results.length === 0) return;
  const { info } = await deps.store.recordResults(ref.importId, results);
  deps.metrics?.records(info.options.resource, results);
}
