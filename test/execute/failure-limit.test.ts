import { describe, expect, it } from 'vitest';
import { failureLimit, failureLimitReason } from '../../src/execute/failure-limit.js';

describe('--max-failures', () => {
  it('takes a count or a percentage of the records', () => {
    expect(failureLimit('15', 1_000)).toBe(15);
    expect(failureLimit('5%', 1_000)).toBe(50);
    expect(failureLimit(' 2.5% ', 1_000)).toBe(25);
    expect(failureLimit('1%', 50)).toBe(0);
    expect(failureLimit(undefined, 10)).toBeUndefined();
    expect(failureLimit('', 10)).toBeUndefined();
  });

  it('stops only once the failures pass the limit', () => {
    expect(failureLimitReason('5%', 50, 1_000)).toBeUndefined();
    expect(failureLimitReason('5%', 51, 1_000)).toBe(
      'stopped: 51 records failed, more than --max-failures 5%',
    );
  });

  it('refuses anything else, naming the value', () => {
    expect(() => failureLimit('five', 10)).toThrow(/"five" is not a number or a percentage/);
    expect(() => failureLimit('-1', 10)).toThrow(/PORTER_USAGE|not a number/);
  });
});
