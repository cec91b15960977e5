/**
 * The import graph of src/ has no cycle: each idea has one owner, and the modules that use it
 * import it, never the other way round. Type-only imports count too (a cycle of types is still two
 * files that each need the other), and so do lazy `import()`s.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

const SPECIFIERS = [
  // import … from '…', export … from '…' (across lines, type-only included)
  /(?:^|[\s;])(?:import|export)\s[^'";]*?\sfrom\s*['"]([^'"]+)['"]/g,
  // import '…' (for its effects)
  /(?:^|[\s;])import\s*['"]([^'"]+)['"]/g,
  // import('…')
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
];

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await sourceFiles(path)));
    else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/** The file a relative specifier names: `./x.js` is `./x.ts` in the sources. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = resolve(dirname(from), specifier);
  if (existsSync(target) && /\.(ts|js)$/.test(target)) return target;
  const asTs = target.replace(/\.js$/, '.ts');
  if (existsSync(asTs)) return asTs;
  throw new Error(`${relative(SRC, from)} imports ${specifier}, which is no file`);
}

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

async function importGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const file of await sourceFiles(SRC)) {
    const text = withoutComments(await readFile(file, 'utf8'));
    const targets = new Set<string>();
    for (const pattern of SPECIFIERS) {
      for (const match of text.matchAll(pattern)) {
        const target = resolveSpecifier(file, match[1]!);
        if (target !== undefined) targets.add(target);
      }
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the files around it (first file repeated). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const done = new Set<string>();
  const onPath = new Map<string, number>();
  const path: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    onPath.set(file, path.length);
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      const at = onPath.get(next);
      if (at !== undefined) cycles.push([...path.slice(at), next]);
      else if (!done.has(next)) visit(next);
    }
    path.pop();
    onPath.delete(file);
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) if (!done.has(file)) visit(file);
  return cycles;
}

describe('the import graph of src/', () => {
  it('reads the imports of every kind', async () => {
    const graph = await importGraph();
    const edges = (file: string): string[] =>
      (graph.get(join(SRC, file)) ?? []).map((target) => relative(SRC, target));
    // a type-only import, a multi-line import, and a lazy import()
    expect(edges('snapshot/prepare-import.ts')).toContain('snapshot/prepare-deps.ts');
    expect(edges('plan/plan-batch.ts')).toContain('plan/planned-op.ts');
    expect(edges('cli/commands/index.ts')).toContain('cli/commands/sandbox.ts');
    expect(edges('console/app.js').length).toBeGreaterThan(0);
  });

  it('has no cycle', async () => {
    const cycles = cyclesOf(await importGraph()).map((cycle) =>
      cycle.map((file) => relative(SRC, file)).join(' → '),
    );
    expect(cycles).toEqual([]);
  });
});
