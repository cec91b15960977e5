/**
 * Reading a small configuration file (a targets file, a secret) as a regular file of bounded
 * size. The file is opened without blocking, so a FIFO does not hang start-up, and the open
 * descriptor is checked, so a path swapped for a device (`/dev/zero`) between a check and the
 * read is refused too; at most `maxBytes` are read, whatever the file claims its size is.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Why a configuration file could not be read. */
export type RegularFileProblem = 'missing' | 'unreadable' | 'not-regular' | 'too-large';

export class RegularFileError extends Error {
  constructor(
    readonly problem: RegularFileProblem,
    readonly path: string,
    readonly maxBytes: number,
  ) {
    super(describeProblem(problem, maxBytes));
    this.name = 'RegularFileError';
  }
}

/** The problem in words, after the file's name. */
export function describeProblem(problem: RegularFileProblem, maxBytes: number): string {
  switch (problem) {
    case 'missing':
      return 'does not exist';
    case 'unreadable':
      return 'cannot be read';
    case 'not-regular':
      return 'is not a regular file (a directory, a device, a FIFO or a socket)';
    case 'too-large':
      return `is larger than ${maxBytes} bytes`;
  }
}

/** The whole content of a regular file of at most `maxBytes`, else a RegularFileError. */
export function readRegularFileSync(path: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new RegularFileError(code === 'ENOENT' ? 'missing' : 'unreadable', path, maxBytes);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new RegularFileError('not-regular', path, maxBytes);
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > maxBytes) throw new RegularFileError('too-large', path, maxBytes);
    }
    return buffer.subarray(0, length);
  } catch (error) {
    if (error instanceof RegularFileError) throw error;
    throw new RegularFileError('unreadable', path, maxBytes);
  } finally {
    closeSync(fd);
  }
}
