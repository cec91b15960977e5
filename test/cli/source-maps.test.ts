/**
 * The bundle's source maps are read only when someone reads stack traces closely (LOG_LEVEL
 * debug or trace): reading them costs every start of every command.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** Whether a process that loaded porter's bundle (bin/bundle.js) has source maps on. */
async function sourceMapsAfterBundle(logLevel: string | undefined): Promise<string> {
  const env = { ...process.env };
  delete env.LOG_LEVEL;
  delete env.NODE_OPTIONS;
  if (logLevel !== undefined) env.LOG_LEVEL = logLevel;
  const { stdout } = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const { bundled } = await import('./bin/bundle.js'); await bundled('src/cli/main.ts'); " +
        'console.log(String(process.sourceMapsEnabled));',
    ],
    { env },
  );
  return stdout.trim();
}

describe('source maps', () => {
  it('are off by default and at info, on at debug and trace', async () => {
    expect(await sourceMapsAfterBundle(undefined)).toBe('false');
    expect(await sourceMapsAfterBundle('info')).toBe('false');
    expect(await sourceMapsAfterBundle('debug')).toBe('true');
    expect(await sourceMapsAfterBundle('trace')).toBe('true');
  }, 120_000);
});
