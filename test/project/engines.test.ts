/**
 * The Node.js version porter says it needs (package.json `engines`, the README) is one every
 * installed package accepts, so `npm ci` on it installs without an EBADENGINE warning.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

type Version = [number, number, number];

function parseVersion(text: string): { version: Version; given: number } {
  const parts = text.replace(/^v/, '').split('.');
  const numbers = parts.filter((part) => /^\d+$/.test(part)).map(Number);
  const given = numbers.length;
  return { version: [numbers[0] ?? 0, numbers[1] ?? 0, numbers[2] ?? 0], given };
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether `version` meets one comparator of an npm range (the forms package-lock.json holds). */
function meets(version: Version, comparator: string): boolean {
  const match = /^(\^|~|>=|<=|>|<|=)?(.+)$/.exec(comparator);
  if (!match) throw new Error(`unread comparator "${comparator}"`);
  const [, op = '', text] = match;
  // "*" or "x": any version
  if (op === '' && /^[*xX]$/.test(text!)) return true;
  const { version: bound, given } = parseVersion(text!);
  const order = compare(version, bound);
  switch (op) {
    case '>=':
      return order >= 0;
    case '>':
      return order > 0;
    case '<=':
      return order <= 0;
    case '<':
      return order < 0;
    case '^':
      return order >= 0 && version[0] === bound[0];
    case '~':
      return order >= 0 && version[0] === bound[0] && version[1] === bound[1];
    default:
      // an exact or partial version: "20", "6.*", "20.19.0"
      return bound.slice(0, Math.max(given, 1)).every((part, index) => version[index] === part);
  }
}

/** Whether `version` is in an npm range like "^20.19.0 || >=22.12.0" or ">= 18". */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .replace(/([<>=^~]+)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean)
      .every((comparator) => meets(version, comparator)),
  );
}

describe('the Node.js version porter needs', () => {
  it('is accepted by every package of the lock file, and is the one the README names', async () => {
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as {
      engines: { node: string };
    };
    const floor = /^>=\s*(\d+\.\d+(?:\.\d+)?)$/.exec(pkg.engines.node)?.[1];
    expect(floor).toBeDefined();
    const oldest = parseVersion(floor!).version;
    const lock = JSON.parse(await readFile('package-lock.json', 'utf8')) as {
      packages: Record<string, { version?: string; engines?: { node?: string } }>;
    };
    const refusing = Object.entries(lock.packages)
      .filter(([path, info]) => path !== '' && typeof info.engines?.node === 'string')
      .filter(([, info]) => !satisfies(oldest, info.engines!.node!))
      .map(([path, info]) => `${path}@${info.version}: ${info.engines!.node}`);
    expect(refusing).toEqual([]);
    const readme = await readFile('README.md', 'utf8');
    expect(readme).toContain(`Node.js ${floor} or newer`);
  });

  it('reads npm ranges as npm does', () => {
    expect(satisfies([20, 19, 0], '^20.19.0 || ^22.13.0 || >=24')).toBe(true);
    expect(satisfies([20, 12, 0], '^20.19.0 || ^22.13.0 || >=24')).toBe(false);
    expect(satisfies([20, 20, 2], '>=22')).toBe(false);
    expect(satisfies([20, 20, 2], '>= 22.22')).toBe(false);
    expect(satisfies([20, 19, 0], '6.* || 8.* || >= 10.*')).toBe(true);
    expect(satisfies([20, 19, 0], '>=16 || 14 >=14.17')).toBe(true);
    expect(satisfies([20, 19, 0], '18 || 20 || >=22')).toBe(true);
    expect(satisfies([21, 0, 0], '18 || 20')).toBe(false);
  });
});
