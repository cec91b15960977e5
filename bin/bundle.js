// porter's sources bundled by esbuild (which tsx brings along) into .porter/build/KEY/, made
// on first use and again whenever a source changed: KEY is a digest of every source file's
// path, size and modification time. A process then loads a few files instead of ~200 modules
// through tsx's loader thread, which takes seconds on a busy machine. Processes that start at
// once with no bundle each build into a folder of their own and the first rename wins.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const BUILDS = join(ROOT, '.porter', 'build');
const STALE_MS = 24 * 3600 * 1000;

function sourceFiles(dir, into) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, into);
    else if (entry.isFile()) into.push(path);
  }
  return into;
}

function sourcesKey(entry, esbuildVersion) {
  const hash = createHash('sha256').update(`${entry}\0${esbuildVersion}\0${process.version}\0`);
  for (const path of sourceFiles(join(ROOT, 'src'), []).sort()) {
    const { size, mtimeMs } = statSync(path);
    hash.update(`${relative(ROOT, path)}\0${size}\0${mtimeMs}\0`);
  }
  return hash.digest('hex').slice(0, 16);
}

/** URL of the bundled entry point (a path under src/, e.g. src/cli/main.ts), built if needed. */
export async function bundled(entry) {
  const require = createRequire(import.meta.url);
  const { version } = JSON.parse(readFileSync(require.resolve('esbuild/package.json'), 'utf8'));
  const key = sourcesKey(entry, version);
  const dir = join(BUILDS, key);
  const main = join(dir, 'main.js');
  if (!existsSync(main)) {
    const esbuild = await import('esbuild');
    const scratch = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await esbuild.build({
      entryPoints: { main: join(ROOT, entry) },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      sourcemap: 'linked',
      outdir: scratch,
      logLevel: 'silent',
    });
    try {
      renameSync(scratch, dir);
    } catch {
      // another process built the same sources first
      rmSync(scratch, { recursive: true, force: true });
    }
    // a process still running from an older bundle may yet load one of its chunks: a day on
    for (const old of readdirSync(BUILDS)) {
      const path = join(BUILDS, old);
      try {
        if (old !== key && Date.now() - statSync(path).mtimeMs > STALE_MS) {
          rmSync(path, { recursive: true, force: true });
        }
      } catch {
        // another process cleaned it first
      }
    }
    if (!existsSync(main)) throw new Error(`no bundle at ${main}`);
  }
  process.setSourceMapsEnabled(true);
  return pathToFileURL(main).href;
}
