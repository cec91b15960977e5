/**
 * An in-process porter (producer, import and export workers) against real Redis and a
 * sandbox, with its own export directory, all removed by `close()`.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { FINAL_EXPORT_STATES, type ExportInfo } from '../../src/export/export-types.js';
import { startPipeline, type Pipeline, type PipelineOptions } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';

export interface ExportHarness {
  pipeline: Pipeline;
  /** PORTER_EXPORT_DIR of this harness (a fresh temporary directory). */
  outDir: string;
  /** Waits until the export completed or failed. */
  waitExport(exportId: string, timeoutMs?: number): Promise<ExportInfo>;
  close(): Promise<void>;
}

export async function startExportHarness(options: PipelineOptions = {}): Promise<ExportHarness> {
  const outDir = await mkdtemp(join(tmpdir(), 'porter-export-'));
  const pipeline = await startPipeline({
    ...options,
    env: { PORTER_EXPORT_DIR: outDir, ...options.env },
  });
  return {
    pipeline,
    outDir,
    waitExport: (exportId, timeoutMs = 30_000) =>
      waitFor(
        async () => {
          const info = await pipeline.context.exportStore.get(exportId);
          return info && FINAL_EXPORT_STATES.has(info.state) ? info : undefined;
        },
        { timeoutMs, what: `export ${exportId} to end` },
      ),
    async close() {
      await pipeline.close();
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/** The rows of a CSV file as objects keyed by its header. */
export async function readCsv(path: string): Promise<Record<string, string>[]> {
  return parse(await readFile(path, 'utf8'), { columns: true }) as Record<string, string>[];
}

/** Every entry under `dir`, recursively, as paths relative to it (sorted). */
export async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries.map(String).sort();
}
