import { describe, expect, it } from 'vitest';
import { closeParts, rowBits } from '../../src/results/result-writer.js';

describe('rowBits', () => {
  it("sets each row's bit (row − 1, highest bit of a byte first) in the bytes they span", () => {
    const { from, bytes } = rowBits([9, 1, 16, 17]);
    expect(from).toBe(0);
    expect([...bytes]).toEqual([0b1000_0000, 0b1000_0001, 0b1000_0000]);
    const later = rowBits([801, 808]);
    expect(later.from).toBe(100);
    expect([...later.bytes]).toEqual([0b1000_0001]);
  });

  it('gives no bytes for no rows', () => {
    expect(rowBits([]).bytes.length).toBe(0);
  });
});

describe('closeParts', () => {
  it('keeps rows near one another in one part, in their order', () => {
    expect(closeParts([5, 3, 4], (row) => row)).toEqual([[5, 3, 4]]);
  });

  it('splits rows far apart into sorted parts', () => {
    const parts = closeParts([1_000_000, 2, 1, 1_000_001], (row) => row);
    expect(parts).toEqual([
      [1, 2],
      [1_000_000, 1_000_001],
    ]);
  });
});
