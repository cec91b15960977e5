/**
 * Blank and short rows are data, not exceptions: a megabyte of them must not build an Error per
 * row (that once took a minute of CPU). Every Error built while the upload is read is counted:
 * the global Error is wrapped before any module loads, so subclasses defined by the modules
 * (and by the libraries they load) extend the counting one.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const errors = vi.hoisted(() => {
  const state = { counting: false, built: 0 };
  const original = globalThis.Error;
  globalThis.Error = new Proxy(original, {
    construct(target, args: unknown[], newTarget: new (...args: unknown[]) => object) {
      if (state.counting) state.built++;
      return Reflect.construct(target, args, newTarget) as object;
    },
    apply(target, self, args: unknown[]) {
      if (state.counting) state.built++;
      return Reflect.apply(target, self, args) as Error;
    },
  });
  return state;
});

const { runIngest } = await import('./ingest-fixture.js');

const MIB = 1024 * 1024;

describe('blank and short rows', () => {
  beforeEach(() => {
    errors.built = 0;
    errors.counting = true;
  });
  afterEach(() => {
    errors.counting = false;
  });

  it('skips 1 MiB of blank lines without building an Error per line', async () => {
    // a sync refuses what is left: no record (any other mode takes it as an empty feed)
    const outcome = await runIngest(`username,city\n${'\n'.repeat(MIB)}`, { mode: 'sync' });
    expect(outcome.items).toEqual([]);
    expect(outcome.error?.code).toBe('PORTER_INPUT_EMPTY');
    expect(outcome.error?.message).toMatch(/header row but no records/);
    // the PorterError itself, and little else: nothing per line
    expect(errors.built).toBeLessThan(5);
  });

  it('skips blank lines in CRLF and CR files alike, counting them as lines', async () => {
    const outcome = await runIngest(
      `username\r\n${'\r\n'.repeat(100_000)}alice\r${'\r'.repeat(100_000)}bob\n`,
    );
    expect(outcome.items.map((item) => [item.row, item.line])).toEqual([
      [1, 100_002],
      [2, 200_003],
    ]);
    expect(errors.built).toBeLessThan(5);
  });

  it('reports 256 KiB of short rows as invalid records, building no Error for them', async () => {
    const outcome = await runIngest(`username,city,dept\n${'x\n'.repeat(MIB / 8)}`);
    expect(outcome.error).toBeUndefined();
    expect(outcome.items).toHaveLength(MIB / 8);
    expect(outcome.items[0]).toMatchObject({
      kind: 'invalid',
      error: 'row 1: the row has 1 cell but the header has 3 columns',
    });
    expect(errors.built).toBeLessThan(5);
  });

  it('skips blank NDJSON lines without building an Error per line', async () => {
    const outcome = await runIngest(`\n${'\n'.repeat(MIB)}{"username":"a"}\n`, {
      format: 'ndjson',
    });
    expect(outcome.items.map((item) => [item.row, item.line])).toEqual([[1, MIB + 2]]);
    expect(errors.built).toBeLessThan(5);
  });
});
