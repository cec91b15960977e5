// porter's sources bundled by esbuild (which tsx brings along) into .porter/build/KEY/, made
// on first use and again whenever a source or the installed packages changed: KEY is a digest
// of every source file's path, size and modification time, of this file and of npm's record of
// what is installed. A process then loads a few files instead of ~200 sources through tsx's
// loader thread, which takes seconds on a busy machine. Processes that start at once with no
// bundle each build into a folder of their own and the first rename wins.
//
// The packages every command loads (Redis, queue, HTTP client, validation, command line) are
// bundled too, with what they import: Node then reads and compiles a few files instead of
// resolving ~650 small modules and lexing the CommonJS ones for their exports, which halves a
// command's start-up CPU. Packages that find files of their own at run time (fastify and its
// plugins, the queue board's pages, pino's transports) and native ones stay where npm put them.
// Whitespace and syntax are minified (names are kept): less to parse at each start.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const BUILDS = join(ROOT, '.porter', 'build');
const SOURCES = join(ROOT, 'src');
const STALE_MS = 24 * 3600 * 1000;
/** LOG_LEVEL values under which stack traces name places in src/ (source maps), not the bundle's. */
const SOURCE_MAP_LEVELS = new Set(['debug', 'trace']);

/** Packages bundled with the sources when porter's sources import them, and all they import. */
const BUNDLED = new Set([
  'bullmq',
  'commander',
  'csv-parse',
  'csv-stringify',
  'ioredis',
  'jsonata',
  'undici',
  'zod',
]);
/** Never bundled, even when a bundled package imports them: native code, files of their own. */
const NEVER_BUNDLED = new Set(['msgpackr-extract', 'esbuild', 'tsx']);

/** `@scope/name` or `name` of an import of a package (`name/sub/path`). */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Bundles BUNDLED (from porter's sources) and what bundled packages import; the rest is external. */
const choosePackages = {
  name: 'porter-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      const name = packageName(args.path);
      if (NEVER_BUNDLED.has(name)) return { external: true };
      const fromSources = args.importer.startsWith(SOURCES + sep);
      if (!fromSources || BUNDLED.has(name)) return undefined;
      return { external: true };
    });
  },
};

/**
 * Bundled CommonJS packages call `require` (Node's built-ins, NEVER_BUNDLED) and may read
 * `__dirname`: each output file gets both, as a CommonJS module would.
 */
const BANNER = [
  "import { createRequire as __porterCreateRequire } from 'node:module';",
  "import { dirname as __porterDirname } from 'node:path';",
  "import { fileURLToPath as __porterFileURLToPath } from 'node:url';",
  'const require = __porterCreateRequire(import.meta.url);',
  'const __filename = __porterFileURLToPath(import.meta.url);',
  'const __dirname = __porterDirname(__filename);',
].join(' ');

function sourceFiles(dir, into) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, into);
    else if (entry.isFile()) into.push(path);
  }
  return into;
}

/** What the bundle is made of besides the sources: this file, and what npm installed. */
const INPUTS = [
  fileURLToPath(import.meta.url),
  join(ROOT, 'node_modules', '.package-lock.json'),
  join(ROOT, 'package-lock.json'),
];

function sourcesKey(entry, esbuildVersion) {
  const hash = createHash('sha256').update(`${entry}\0${esbuildVersion}\0${process.version}\0`);
  for (const path of [...sourceFiles(SOURCES, []).sort(), ...INPUTS]) {
    if (!existsSync(path)) continue;
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
      plugins: [choosePackages],
      banner: { js: BANNER },
      sourcemap: 'linked',
      sourcesContent: false,
      minifyWhitespace: true,
      minifySyntax: true,
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
  // stack traces through the source maps when someone reads them closely: reading the maps
  // costs every start about 50 ms of CPU (node --enable-source-maps turns them on as well)
  if (SOURCE_MAP_LEVELS.has(process.env.LOG_LEVEL ?? '')) process.setSourceMapsEnabled(true);
  return pathToFileURL(main).href;
}
