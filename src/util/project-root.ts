/**
 * The folder porter is installed in (the one holding its package.json), found from this
 * module's own place, so files beside the sources (examples, package.json) are found the same
 * way whether porter runs from its sources or from its bundle (bin/bundle.js).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown };
      if (name === 'porter') return dir;
    }
    if (dirname(dir) === dir) throw new Error(`no porter package.json above ${from}`);
  }
}

export const PROJECT_ROOT: string = findRoot(dirname(fileURLToPath(import.meta.url)));
