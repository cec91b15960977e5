/** The diff use case: two bundles, or a bundle and the target read in bulk, compared. */
import { createReadStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { RESOURCE_NAMES } from '../admin/resources.js';
import { DiffReport } from '../diff/diff-report.js';
import { runDiff, type DiffResult, type DiffRow, type DiffSource } from '../diff/run-diff.js';
import { readBundle } from '../migrate/bundle-reader.js';
import type { PorterContext } from './context.js';

/** A bundle file's records, streamed. */
export async function* bundleDiffSource(path: string): DiffSource {
  for await (const part of readBundle(createReadStream(path))) {
    if (part.kind === 'records') yield part;
  }
}

/** A target's records, each resource read with one streamed GET. */
export async function* liveDiffSource(context: PorterContext, target?: string): DiffSource {
  const client = context.createAdminClient(4, target);
  try {
    for (const resource of RESOURCE_NAMES) {
      for await (const records of client.streamBatches(resource)) {
        yield { resource, records: records as Record<string, unknown>[] };
      }
    }
  } finally {
    await client.close();
  }
}

/** Compares A and B; each difference goes to `onRow` as it is found. */
export async function diffRows(
  context: PorterContext,
  a: DiffSource,
  b: DiffSource,
  onRow: (row: DiffRow) => void,
): Promise<DiffResult & { rows: number }> {
  let rows = 0;
  const result = await runDiff(context.redis, context.env.PORTER_PREFIX, a, b, (row) => {
    rows++;
    onRow(row);
  });
  return { ...result, rows };
}

/** Compares A and B and writes diff.csv and diff.json into `dir`. */
export async function diffDirectories(
  context: PorterContext,
  a: DiffSource,
  b: DiffSource,
  dir: string,
): Promise<DiffResult & { files: string[]; rows: number }> {
  await mkdir(dir, { recursive: true });
  const report = new DiffReport(dir);
  let result: DiffResult;
  try {
    result = await runDiff(context.redis, context.env.PORTER_PREFIX, a, b, (row) =>
      report.add(row),
    );
  } catch (error) {
    await report.close().catch(() => []);
    throw error;
  }
  const files = await report.close();
  return { ...result, files, rows: report.rows };
}
