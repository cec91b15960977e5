/**
 * A mapping file read from disk (`--map`): its JSON, and the tables it names by file (CSV or
 * JSON beside it) read into it, so the mapping that travels with an import is whole and needs
 * no file again (a retry, a schedule's next run, a worker).
 */
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { dirname, extname, isAbsolute, relative, resolve, sep } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { ResourceName } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { loadMapping, type Mapping } from '../ingest/mapping.js';

/** Largest table file a mapping may name (its values travel with every import that uses it). */
export const MAX_TABLE_FILE_BYTES = 1024 * 1024;

function invalid(message: string, cause?: unknown): PorterError {
  return new PorterError('PORTER_MAPPING_INVALID', `Mapping file: ${message}`, { cause });
}

function errnoCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}

/**
 * Where a table's `file` is, refused unless it lies beside the mapping file: a relative path
 * with no `..` step, inside the mapping's folder (or below it) once every symbolic link on the
 * way is followed.
 */
async function tableFilePath(mappingPath: string, file: string, name: string): Promise<string> {
  const steps = file.split(/[\\/]/);
  if (file === '' || file.includes('\0') || isAbsolute(file) || /^[a-zA-Z]:/.test(file)) {
    throw invalid(
      `table "${name}": its file ${JSON.stringify(file)} must be a path relative to the ` +
        'mapping file, beside it or in a folder below it',
    );
  }
  if (steps.includes('..')) {
    throw invalid(
      `table "${name}": its file ${JSON.stringify(file)} leaves the mapping's folder (".."); ` +
        'put the table beside the mapping file',
    );
  }
  let folder: string;
  let found: string;
  try {
    folder = await realpath(dirname(resolve(mappingPath)));
    found = await realpath(resolve(folder, file));
  } catch (error) {
    throw invalid(`table "${name}": cannot read ${file} (${errnoCode(error)})`, error);
  }
  const inside = relative(folder, found);
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw invalid(
      `table "${name}": ${file} is a link to a file outside the mapping's folder; ` +
        'put the table itself beside the mapping file',
    );
  }
  return found;
}

/**
 * The text of a table file: a regular file (not a device, a FIFO or a folder), at most
 * MAX_TABLE_FILE_BYTES. Opened without blocking (a FIFO would wait for a writer) and checked on
 * the open handle, so what is checked is what is read.
 */
async function readTableText(path: string, file: string, name: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw invalid(`table "${name}": cannot read ${file} (${errnoCode(error)})`, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw invalid(`table "${name}": ${file} is not a regular file; name a CSV or JSON file`);
    }
    const tooLarge = (): PorterError =>
      invalid(
        `table "${name}": ${file} is larger than ${MAX_TABLE_FILE_BYTES / 1024 / 1024} MiB, ` +
          'the limit of a table file',
      );
    if (stats.size > MAX_TABLE_FILE_BYTES) throw tooLarge();
    // read one byte past the limit: a file that grew since its stat is refused too
    const buffer = Buffer.alloc(MAX_TABLE_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_TABLE_FILE_BYTES) throw tooLarge();
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * A table file's values: a JSON object (key → value or list), or a CSV whose first column is
 * the key and second the value, a key on several rows giving a list. Keys are data, whatever
 * they are (`__proto__`, `constructor`): the values have no prototype.
 */
export async function readTableFile(
  mappingPath: string,
  file: string,
  name: string,
): Promise<Record<string, unknown>> {
  const path = await tableFilePath(mappingPath, file, name);
  const text = await readTableText(path, file, name);
  if (extname(file).toLowerCase() === '.json') {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw invalid(`table "${name}": ${file} is not valid JSON`, error);
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw invalid(`table "${name}": ${file} must hold a JSON object (key → value)`);
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
    throw invalid(`table "${name}": ${file} is not valid CSV (${(error as Error).message})`, error);
  }
  const values = Object.create(null) as Record<string, unknown>;
  // the first row names the columns
  for (const [index, row] of rows.slice(1).entries()) {
    if (row.length < 2) {
      throw invalid(`table "${name}": ${file} line ${index + 2} needs a key and a value`);
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
      // table names are data too: `__proto__` is a name like any other
      const inlined = Object.create(null) as Record<string, unknown>;
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
          values: await readTableFile(path, file, name),
        };
      }
      json = { ...(json as object), tables: inlined };
    }
  }
  return loadMapping(json, resource);
}
