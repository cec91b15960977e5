import { describe, expect, it } from 'vitest';
import { ERROR_CODES, isErrorCode } from '../../src/errors/codes.js';
import { PorterError } from '../../src/errors/porter-error.js';
import { RETRYABLE_CODES } from '../../src/errors/retryable.js';

describe('the error table', () => {
  it('every code has an HTTP status, an exit code, a kind and a summary', () => {
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(entry.httpStatus).toBeGreaterThanOrEqual(400);
      expect(entry.httpStatus).toBeLessThan(600);
      expect(Number.isInteger(entry.exitCode) && entry.exitCode > 0 && entry.exitCode < 256).toBe(
        true,
      );
      expect(['transient', 'permanent', 'ambiguous']).toContain(entry.kind);
      expect(entry.summary.length).toBeGreaterThan(10);
    }
  });

  it('a PorterError takes its status and exit code from the table', () => {
    const error = new PorterError('PORTER_UPLOAD_TOO_LARGE', 'too big');
    expect(error.httpStatus).toBe(413);
    expect(error.exitCode).toBe(ERROR_CODES.PORTER_UPLOAD_TOO_LARGE.exitCode);
    expect(error.toJSON()).toEqual({
      code: 'PORTER_UPLOAD_TOO_LARGE',
      message: 'too big',
      details: {},
    });
    expect(isErrorCode('PORTER_UPLOAD_TOO_LARGE')).toBe(true);
    expect(isErrorCode('NOPE')).toBe(false);
  });

  it('docs/error-codes.md lists every code with its HTTP status, exit code and kind', async () => {
    const { readFile } = await import('node:fs/promises');
    const page = await readFile('docs/error-codes.md', 'utf8');
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      const row = page.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
      expect(row, code).toBeDefined();
      const [status, exit, kind] = row!
        .split('|')
        .slice(2, 5)
        .map((cell) => cell.trim());
      expect([code, Number(status), Number(exit)]).toEqual([
        code,
        entry.httpStatus,
        entry.exitCode,
      ]);
      expect(kind, code).toContain(entry.kind);
    }
  });

  it('docs/failures.md lists exactly the codes a retry sends again', async () => {
    const { readFile } = await import('node:fs/promises');
    const page = await readFile('docs/failures.md', 'utf8');
    const section = page.split('### What a retry sends')[1]!.split('Every other failure')[0]!;
    const listed = [...section.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]);
    expect(new Set(listed)).toEqual(new Set(RETRYABLE_CODES));
  });
});
