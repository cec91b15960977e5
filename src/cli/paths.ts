/**
 * Checks of the files and directories named on the command line, made before anything is
 * stored: a bad path ends the command with one line and an exit code from the error table
 * (64 a wrong argument, 66 nothing there), never with a stack trace after the work is done.
 */
import { constants, type Stats } from 'node:fs';
import { access, open, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { PorterError } from '../errors/porter-error.js';

function errnoCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

async function statOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

function notFound(what: string, path: string, problem: string): PorterError {
  return new PorterError('PORTER_NOT_FOUND', `${what} ${path}: ${problem}`, {
    details: { field: what, value: path },
  });
}

function usage(what: string, path: string, problem: string): PorterError {
  return new PorterError('PORTER_USAGE', `${what} ${path}: ${problem}`, {
    details: { field: what, value: path },
  });
}

/** A file to read: it exists, is a file and is readable. `what` names it ("--map", "FILE"). */
export async function checkInputFile(path: string, what: string): Promise<void> {
  let stats: Stats | undefined;
  try {
    stats = await stat(path);
  } catch (error) {
    throw notFound(what, path, `cannot read it (${errnoCode(error)})`);
  }
  if (stats.isDirectory()) throw usage(what, path, 'is a directory; name a file');
  try {
    await access(path, constants.R_OK);
  } catch (error) {
    throw notFound(what, path, `cannot read it (${errnoCode(error)})`);
  }
}

/** The content of a JSON file (a mapping): missing is 66, not JSON is PORTER_MAPPING_INVALID. */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  await checkInputFile(path, what);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw notFound(what, path, `cannot read it (${errnoCode(error)})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new PorterError(
      'PORTER_MAPPING_INVALID',
      `${what} ${path}: not valid JSON (${(error as Error).message})`,
      { cause: error, details: { field: what, value: path } },
    );
  }
}

export interface OutputFileCheck {
  /** Overwrite a file that exists. @defaultValue false */
  force?: boolean;
  /** Files the command reads; none of them is ever written, even with force. */
  inputs?: readonly string[];
}

/** A file to write: not a directory, not an input, not there already unless forced, in a directory that exists. */
export async function checkOutputFile(
  path: string,
  what: string,
  options: OutputFileCheck = {},
): Promise<void> {
  let stats: Stats | undefined;
  try {
    stats = await statOrUndefined(path);
  } catch (error) {
    throw notFound(what, path, `cannot reach it (${errnoCode(error)})`);
  }
  if (stats === undefined) {
    await checkDirectoryExists(dirname(resolve(path)), what, path);
    return;
  }
  if (stats.isDirectory()) throw usage(what, path, 'is a directory; name a file');
  for (const input of options.inputs ?? []) {
    if (input === '-') continue;
    const inputStats = await statOrUndefined(input).catch(() => undefined);
    // the same file however it is named (a symbolic or hard link, another relative path)
    if (inputStats && inputStats.dev === stats.dev && inputStats.ino === stats.ino) {
      throw usage(what, path, `is the input file ${input}; write it elsewhere`);
    }
  }
  if (!options.force) throw usage(what, path, 'exists; pass --force to overwrite it');
  try {
    await access(path, constants.W_OK);
  } catch (error) {
    throw usage(what, path, `cannot write it (${errnoCode(error)})`);
  }
}

async function checkDirectoryExists(dir: string, what: string, path: string): Promise<void> {
  let stats: Stats | undefined;
  try {
    stats = await statOrUndefined(dir);
  } catch (error) {
    throw notFound(what, path, `cannot reach directory ${dir} (${errnoCode(error)})`);
  }
  if (stats === undefined) throw notFound(what, path, `directory ${dir} does not exist`);
  if (!stats.isDirectory()) throw notFound(what, path, `${dir} is not a directory`);
  try {
    await access(dir, constants.W_OK);
  } catch (error) {
    throw usage(what, path, `cannot write in ${dir} (${errnoCode(error)})`);
  }
}

/** A file read at start and rewritten as it changes (a data file): a file, or none yet in a directory that exists. */
export async function checkStateFile(path: string, what: string): Promise<void> {
  let stats: Stats | undefined;
  try {
    stats = await statOrUndefined(path);
  } catch (error) {
    throw notFound(what, path, `cannot reach it (${errnoCode(error)})`);
  }
  if (stats === undefined) await checkDirectoryExists(dirname(resolve(path)), what, path);
  else if (stats.isDirectory()) throw usage(what, path, 'is a directory; name a file');
}

/** A directory to write in, made when missing: refused when something else is there. */
export async function checkOutputDirectory(path: string, what: string): Promise<void> {
  let stats: Stats | undefined;
  try {
    stats = await statOrUndefined(path);
  } catch (error) {
    throw usage(what, path, `cannot reach it (${errnoCode(error)})`);
  }
  if (stats !== undefined && !stats.isDirectory()) {
    throw usage(what, path, 'is a file; name a directory');
  }
}

/**
 * Opens a checked output file: created anew (a file that appeared since the check is refused)
 * unless `force`. Errors come back as PorterErrors, never as an unhandled 'error' event.
 */
export async function openOutputFile(path: string, what: string, force = false): Promise<Writable> {
  try {
    const handle = await open(path, force ? 'w' : 'wx');
    return handle.createWriteStream();
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') {
      throw usage(what, path, 'exists; pass --force to overwrite it');
    }
    throw usage(what, path, `cannot write it (${errnoCode(error)})`);
  }
}

/**
 * A directory a command writes these files into: each must be new there unless `force`, so no
 * earlier output is overwritten without being asked.
 */
export async function checkOutputFilesIn(
  dir: string,
  names: readonly string[],
  what: string,
  force = false,
): Promise<void> {
  await checkOutputDirectory(dir, what);
  if (force) return;
  for (const name of names) {
    const path = join(dir, name);
    if ((await statOrUndefined(path).catch(() => undefined)) !== undefined) {
      throw usage(
        what,
        dir,
        `holds ${name} already; pass --force to overwrite it, or name another directory`,
      );
    }
  }
}
