/**
 * Every installed package with an install script (preinstall, install, postinstall, or the
 * `node-gyp rebuild` npm runs for a binding.gyp) is allowed or denied by package.json's
 * `allowScripts`, so `npm ci` prints no "not yet covered by allowScripts" warning; every entry
 * names such a package, and docs/development.md says why it is allowed or denied.
 */
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

interface LockEntry {
  name?: string;
  version?: string;
  hasInstallScript?: boolean;
}

interface Manifest {
  scripts?: Record<string, string>;
  gypfile?: boolean;
}

const INSTALL_EVENTS = ['preinstall', 'install', 'postinstall'];

/** The package name of a lock path such as `node_modules/a/node_modules/@scope/b`. */
function nameOf(path: string, entry: LockEntry): string {
  return entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/** The package an allowScripts key names: `pkg`, `@scope/pkg`, `pkg@1.2.3`, `pkg@1 || 2`. */
function keyName(key: string): string {
  const at = key.indexOf('@', 1);
  return at === -1 ? key : key.slice(0, at);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Whether the package installed at this path runs something when installed. */
async function runsOnInstall(path: string): Promise<boolean> {
  const manifestPath = join(path, 'package.json');
  if (!(await exists(manifestPath))) return false; // not installed here (another platform's)
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Manifest;
  if (INSTALL_EVENTS.some((event) => manifest.scripts?.[event])) return true;
  return manifest.gypfile !== false && (await exists(join(path, 'binding.gyp')));
}

/** Names of the packages with install scripts, by the lock file and by what is installed. */
async function packagesWithInstallScripts(): Promise<string[]> {
  const lock = JSON.parse(await readFile('package-lock.json', 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const names = new Set<string>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || !path.includes('node_modules/')) continue;
    if (entry.hasInstallScript || (await runsOnInstall(path))) names.add(nameOf(path, entry));
  }
  return [...names].sort();
}

async function allowScripts(): Promise<Record<string, unknown>> {
  const pkg = JSON.parse(await readFile('package.json', 'utf8')) as {
    allowScripts?: Record<string, unknown>;
  };
  return pkg.allowScripts ?? {};
}

describe('install scripts', () => {
  it('of every package that has one are allowed or denied in package.json', async () => {
    const declared = new Set(Object.keys(await allowScripts()).map(keyName));
    const found = await packagesWithInstallScripts();
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter((name) => !declared.has(name))).toEqual([]);
  });

  it('are declared only for packages that have them, each true or false', async () => {
    const entries = Object.entries(await allowScripts());
    const found = new Set(await packagesWithInstallScripts());
    expect(entries.filter(([key]) => !found.has(keyName(key))).map(([key]) => key)).toEqual([]);
    expect(entries.filter(([, value]) => typeof value !== 'boolean')).toEqual([]);
  });

  it('are explained in docs/development.md, package by package', async () => {
    const text = await readFile('docs/development.md', 'utf8');
    const section = /## Install scripts\n([\s\S]*?)(?=\n## |$)/.exec(text)?.[1] ?? '';
    const names = Object.keys(await allowScripts()).map(keyName);
    expect(names.filter((name) => !section.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('keyName', () => {
  it('reads the package name of every key form', () => {
    expect(keyName('esbuild')).toBe('esbuild');
    expect(keyName('esbuild@0.28.2')).toBe('esbuild');
    expect(keyName('@scope/pkg')).toBe('@scope/pkg');
    expect(keyName('@scope/pkg@1.0.0 || 2.0.0')).toBe('@scope/pkg');
  });
});
