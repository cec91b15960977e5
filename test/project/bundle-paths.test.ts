/**
 * porter runs from a bundle of its sources (bin/bundle.js), where a module's own URL is the
 * bundle's: a file beside the sources must be found from PROJECT_ROOT, never from
 * import.meta.url.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await sources(path)));
    else if (path.endsWith('.ts')) found.push(path);
  }
  return found;
}

describe('paths in the sources', () => {
  it('only src/util/project-root.ts reads import.meta.url', async () => {
    const readers: string[] = [];
    for (const path of await sources('src')) {
      if ((await readFile(path, 'utf8')).includes('import.meta.url')) readers.push(path);
    }
    expect(readers).toEqual([join('src', 'util', 'project-root.ts')]);
  });
});
