/**
 * ioredis leaves String.prototype a slow (dictionary-mode) prototype; keepStringMethodsFast
 * makes it fast again. Asked of V8 itself, in a child process allowed its natives syntax.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const probe = fileURLToPath(new URL('./fixtures/string-prototype-probe.ts', import.meta.url));

it('String.prototype is slow once ioredis is loaded, and fast after keepStringMethodsFast', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', probe],
    { cwd: fileURLToPath(new URL('../..', import.meta.url)) },
  );
  expect(JSON.parse(stdout.trim())).toEqual({ loaded: false, kept: true });
}, 30_000);
