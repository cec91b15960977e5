/**
 * A mapping expression that would run for ever holds no thread: patterns that can take
 * exponential time are refused when the mapping is read, and JSONata runs in a thread of its
 * own that is stopped at a hard deadline, so the thread reading the upload (or answering HTTP)
 * keeps turning. The runaway cases run in a child process with a deadline, so that a regression
 * ends in a clear failure rather than a test runner stuck in a loop.
 */
import { describe, expect, it } from 'vitest';
import { PorterError } from '../../src/errors/porter-error.js';
import { loadMapping } from '../../src/ingest/index.js';
import { runBounded } from '../helpers/bounded-child.js';

const PROBE = 'test/mapping/runaway-probe.ts';
const DEADLINE_MS = 60_000;

function refusal(source: string): PorterError {
  try {
    loadMapping({ fields: { position: source } }, 'users');
  } catch (error) {
    if (error instanceof PorterError) return error;
    throw error;
  }
  throw new Error(`expected ${source} to be refused`);
}

interface Probe {
  turns: number;
  outcomes: Array<{ kind?: string; key?: string; field?: string; error?: string }>;
}

async function probe(which: string): Promise<Probe> {
  const answer = await runBounded(PROBE, [which], DEADLINE_MS);
  expect(answer.stderr).toBe('');
  expect(answer.finished, `the ${which} mapping still held its thread after the deadline`).toBe(
    true,
  );
  return JSON.parse(answer.stdout) as Probe;
}

describe('runaway expressions', () => {
  it.each([
    ['$contains(firstName, /(a+)+b/)', '/(a+)+b/: a repeated group that itself repeats'],
    ['$match(firstName, /(a|aa)*c/)', '/(a|aa)*c/: a repeated group'],
    ["$replace(firstName, /(x?){30}y/, '')", '/(x?){30}y/: a repeated group'],
    ['$split(firstName, /(a)\\1/)', 'back-references are not allowed'],
    ['$contains(firstName, /' + 'a'.repeat(201) + '/)', 'longer than 200 characters'],
  ])('%s is refused when the mapping is read', (source, reason) => {
    const error = refusal(source);
    expect(error.code).toBe('PORTER_MAPPING_INVALID');
    expect(error.message).toContain(`fields.position: `);
    expect(error.message).toContain(reason);
  });

  it('a backtracking pattern that passes the check is stopped at the deadline, the thread free meanwhile', async () => {
    const { turns, outcomes } = await probe('regex');
    const stopped = 'the expression ran for more than 1000 ms and was stopped';
    expect(outcomes.map((outcome) => outcome.error)).toEqual([
      `row 1: field "position": ${stopped}`,
      `row 2: field "position": ${stopped}`,
      `row 3: field "position": ${stopped}`,
      'row 4: field "position": not evaluated: the expression went past its bounds on rows 1, 2, 3',
      'row 5: field "position": not evaluated: the expression went past its bounds on rows 1, 2, 3',
    ]);
    // the records still name their keys (computed by another expression)
    expect(outcomes.map((outcome) => outcome.key)).toEqual(['u1', 'u2', 'u3', 'u4', 'u5']);
    // three evaluations of a second each: the thread reading the upload turned all along
    expect(turns).toBeGreaterThan(10);
  });

  it('one step that builds a huge value stops its thread, not the process', async () => {
    const { outcomes } = await probe('pad');
    for (const outcome of outcomes) {
      expect(outcome.field).toBe('position');
      expect(outcome.error).toMatch(
        /ran for more than 1000 ms and was stopped|used more than 256 MB|built a text of more than|went past its bounds/,
      );
    }
  });

  it('a date format whose parts touch is refused, not matched', async () => {
    const { outcomes } = await probe('date');
    for (const outcome of outcomes) {
      expect(outcome.error).toContain('puts M and D side by side');
    }
  });
});
