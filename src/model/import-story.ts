/**
 * One import's story across the imports that carry it on: a held sync is approved and written by
 * another import, an import is undone by another, retried by another. These words are shared by
 * the summary lines, `porter list` and `porter status`.
 */
import type { ImportInfo } from './import.js';

/**
 * What kind of import this is, in a word or two: an undo, a retry, the writing of an approved
 * sync, the application of a dry run, a dry run, a sync, or a plain import.
 */
export function importKind(info: ImportInfo): string {
  if (info.undoOf !== undefined) return info.options.dryRun ? 'undo dry run' : 'undo';
  if (info.applyOf !== undefined) return info.sync?.approvedFrom ? 'approved sync' : 'apply';
  if (info.retryOf !== undefined) return 'retry';
  if (info.options.dryRun) return 'dry run';
  return info.options.mode === 'sync' ? 'sync' : 'import';
}

/**
 * Whether the import only planned (its records are `planned`, never done): a dry run, or a
 * sync held past its threshold, whether it is still held, was cancelled, or was approved (then
 * another import wrote the plan: `writtenBy`).
 */
export function plansOnly(info: ImportInfo): boolean {
  return info.options.dryRun === true || info.sync?.held === true || info.state === 'held';
}

/** The import this one carries on from, and how: "undoes imp_…", "retries imp_…". */
export function linkFrom(info: ImportInfo): string | undefined {
  if (info.undoOf !== undefined) return `undoes ${info.undoOf}`;
  if (info.applyOf !== undefined) {
    return info.sync?.approvedFrom ? `writes held ${info.applyOf}` : `applies ${info.applyOf}`;
  }
  if (info.retryOf !== undefined) return `retries ${info.retryOf}`;
  return undefined;
}

/** The imports that carried this one on: "written by imp_…", "undone by imp_…". */
export function linksOn(info: ImportInfo): string[] {
  const links: string[] = [];
  if (info.writtenBy !== undefined) links.push(`written by ${info.writtenBy}`);
  if (info.undoneBy !== undefined) links.push(`undone by ${info.undoneBy}`);
  return links;
}

/**
 * Lines that tell where the import's story goes: for a held sync approved, when and by which
 * import it was written; for an undo, a retry or an application, what it carries on; and which
 * import undid it.
 */
export function describeLinks(info: ImportInfo): string[] {
  const lines: string[] = [];
  if (info.approvedAt !== undefined) {
    const by = info.writtenBy === undefined ? '' : `; written by import ${info.writtenBy}`;
    lines.push(`approved at ${info.approvedAt}${by} (porter status ${info.writtenBy ?? info.id})`);
  }
  const from = linkFrom(info);
  if (from !== undefined) lines.push(`this import ${from}`);
  if (info.undoneBy !== undefined) {
    lines.push(`undone by import ${info.undoneBy} (porter status ${info.undoneBy})`);
  }
  return lines;
}
