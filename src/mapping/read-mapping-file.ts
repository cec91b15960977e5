/**
 * A mapping file read from disk (`--map`): its JSON, and the tables it names by file (CSV or
 * JSON beside it) read into it, so the mapping that travels with an import is whole and needs
 * no file again (a retry, a schedule's next run, a worker).
 */
import { readFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { ResourceName } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { loadMapping, type Mapping } from '../ingest/mapping.js';

function invalid(message: string, cause?: unknown): PorterError {
  return new PorterError('PORTER_MAPPING_INVALID', `Mapping file: ${message}`, { cause });
}

/**
 * A table file's values: a JSON object (key → value or list), or a CSV whose first column is
 * the key and second the value, a key on several rows giving a list.
 */
export async function readTableFile(path: string, name: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw invalid(
      `table "${name}": cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      error,
    );
  }
  if (extname(path).toLowerCase() === '.json') {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw invalid(`table "${name}": ${path} is not valid JSON`, error);
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw invalid(`table "${name}": ${path} must hold a JSON object (key → value)`);
    }
    return json as Record<string, unknown>;
  }
  let rows: string[][];
  try {
    rows = parse(text.replace(/^\uFEFF/, ''), {
      skip_empty_lines: true,
      relax_column_count: true,
    }) as string[][];
  } catch (error) {
    throw invalid(`table "${name}": ${path} is not valid CSV (${(error as Error).message})`, error);
  }
  const values: Record<string, unknown> = {};
  // the first row names the columns
  for (const [index, row] of rows.slice(1).entries()) {
    if (row.length < 2) {
      throw invalid(`table "${name}": ${path} line ${index + 2} needs a key and a value`);
    }
    const [key, value] = row;
    const earlier = values[key];
    if (earlier === undefined) values[key] = value;
    else
      values[key] = Array.isArray(earlier) ? [...(earlier as unknown[]), value] : [earlier, value];
  }
  return values;
}

/** Reads a mapping file and the table files it names; checks it whole (PORTER_MAPPING_INVALID). */
export async function readMappingFile(
  path: string,
  json: unknown,
  resource?: ResourceName,
): Promise<Mapping> {
  if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
    const tables = (json as { tables?: unknown }).tables;
    if (typeof tables === 'object' && tables !== null && !Array.isArray(tables)) {
      const inlined: Record<string, unknown> = {};
      for (const [name, table] of Object.entries(tables)) {
        const file = (table as { file?: unknown } | null)?.file;
        if (typeof file !== 'string') {
          inlined[name] = table;
          continue;
        }
        const { file: _file, ...rest } = table as Record<string, unknown>;
        if (rest.values !== undefined) {
          throw invalid(`table "${name}": give "file" or "values", not both`);
        }
        inlined[name] = {
          ...rest,
          values: await readTableFile(resolve(dirname(path), file), name),
        };
      }
      json = { ...(json as object), tables: inlined };
    }
  }
  return loadMapping(json, resource);
}
