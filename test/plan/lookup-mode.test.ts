import { describe, expect, it } from 'vitest';
import { chooseLookup } from '../../src/snapshot/lookup-mode.js';

describe('the auto lookup rule', () => {
  it('reads in bulk while the directory size is not known', () => {
    expect(chooseLookup('auto', 10, undefined).mode).toBe('snapshot');
  });
  it('reads record by record when the upload is under 1% of the directory, else in bulk', () => {
    expect(chooseLookup('auto', 99, 10_000).mode).toBe('each');
    expect(chooseLookup('auto', 100, 10_000).mode).toBe('snapshot');
    expect(chooseLookup('auto', 5_000, 10_000).mode).toBe('snapshot');
  });
  it('an explicit choice wins', () => {
    expect(chooseLookup('each', 1_000_000, undefined).mode).toBe('each');
    expect(chooseLookup('snapshot', 1, 1_000_000).mode).toBe('snapshot');
  });
});

describe('the auto rule with look-alikes checked', () => {
  it('always reads in bulk: only a snapshot sees every key to compare', () => {
    expect(chooseLookup('auto', 1, 1_000_000, true).mode).toBe('snapshot');
  });
  it('each, when asked for, is kept: the keys are compared by a scan of the server keys', () => {
    expect(chooseLookup('each', 1, undefined, true)).toEqual({ mode: 'each', why: 'asked for' });
  });
});
