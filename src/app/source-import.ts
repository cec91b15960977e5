/**
 * An import or sync whose rows are read from a directory source (PORTER_SOURCES_FILE) instead of
 * an upload: the directory is read whole first (a read cut short stops here, before an import is
 * stored or anything written), then its rows go through the same mapping, plan and rails as a
 * file's. An incremental read takes the entries changed since the last read and upserts them:
 * deletions and locks are decided only by a full read.
 */
import { PorterError } from '../errors/porter-error.js';
import type { ImportInfo, ImportOptions } from '../model/import.js';
import { readSource, type SourceResource } from '../sources/read-source.js';
import { SourceState } from '../sources/source-state.js';
import { loadSources } from '../sources/sources.js';
import type { SourceRow } from '../sources/entry-row.js';
import type { PorterContext } from './context.js';
import { boundToTarget, startImport } from './imports.js';

export interface SourceImportRequest {
  /** The source's name in PORTER_SOURCES_FILE. */
  source: string;
  /** The import's options; an incremental read runs as mode upsert whatever they say. */
  options: ImportOptions;
  /** Read only the entries changed since the last read (creates and updates). */
  incremental?: boolean;
}

/** The rows as one JSON array, a row at a time. */
async function* jsonRows(rows: readonly SourceRow[]): AsyncGenerator<string> {
  yield '[';
  for (let index = 0; index < rows.length; index++) {
    yield (index === 0 ? '' : ',\n') + JSON.stringify(rows[index]);
  }
  yield ']';
}

function sourceResource(options: ImportOptions): SourceResource {
  if (options.resource === 'acls') {
    throw new PorterError('PORTER_USAGE', '--source reads users or groups, not ACLs');
  }
  return options.resource;
}

/** Reads the source and submits its rows as an import; `onCreated` as for startImport. */
export async function startSourceImport(
  context: PorterContext,
  request: SourceImportRequest,
  onCreated?: (info: ImportInfo) => void,
): Promise<ImportInfo> {
  const resource = sourceResource(request.options);
  // the target is checked (known, within the principal's limits, writable) before the directory
  // is read: a request refused there reads nothing
  request = { ...request, options: boundToTarget(context, request.options) };
  const source = loadSources(context.env).require(request.source);
  const state = new SourceState(context.redis, context.env.PORTER_PREFIX);
  const before = await state.get(source.name, resource);
  const since = request.incremental ? before.mark : undefined;
  if (request.incremental && request.options.mode === 'sync') {
    // an incremental read never decides what is missing: it only creates and updates
    request = { ...request, options: { ...request.options, mode: 'upsert', sync: undefined } };
  }
  const read = await readSource(source, resource, { since });
  const mapping = request.options.mapping;
  const options: ImportOptions = {
    ...request.options,
    // a person is matched by the directory's own id unless the mapping names another anchor
    ...(mapping && mapping.anchor === undefined
      ? { mapping: { ...mapping, anchor: `\`${source.anchorAttribute}\`` } }
      : {}),
    source: {
      name: source.name,
      entries: read.entries,
      ...(before.entries !== undefined ? { lastEntries: before.entries } : {}),
      ...(since !== undefined ? { since } : {}),
      durationMs: read.durationMs,
    },
  };
  const info = await startImport(
    context,
    {
      options,
      source: jsonRows(read.rows),
      fileName: `source-${source.name}-${resource}.json`,
      format: 'json',
    },
    onCreated,
  );
  // an empty read where the last saw entries is held; it never becomes the count to compare with
  const emptied = read.entries === 0 && (before.entries ?? 0) > 0;
  if (options.dryRun !== true && !emptied) {
    await state.record(source.name, resource, {
      entries: read.entries,
      mark: read.mark,
      full: since === undefined,
    });
  }
  return info;
}
