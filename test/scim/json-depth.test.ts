import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from '../../src/scim/json-depth.js';

describe('JSON nesting depth, counted before parsing', () => {
  it('counts objects and arrays, not brackets inside texts or escaped quotes', () => {
    expect(nestsDeeperThan('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ a: '[[[[{{{{' }), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ a: 'x\\"[[[[' }), 1)).toBe(false);
    expect(nestsDeeperThan(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 32)).toBe(true);
  });
});
