/**
 * A parsed JSON or NDJSON record as a raw record: anything but an object is an invalid record,
 * and so is an object whose text would lose data silently (see json-value.ts).
 */
import { showValue } from './coerce.js';
import { showPath, type ParsedJson } from './json-value.js';
import type { RawRecord } from './types.js';

/** The raw record for one parsed value (`line` for NDJSON). */
export function rawFromJson(parsed: ParsedJson, row: number, line?: number): RawRecord {
  const { value, problems, moreProblems } = parsed;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      row,
      line,
      input: {},
      text: false,
      problem: {
        value,
        message: `the record is not a JSON object (${showValue(value)}); each record must be {...}`,
      },
    };
  }
  const input = value as Record<string, unknown>;
  if (problems.length === 0) return { row, line, input, text: false };
  const [first] = problems;
  const field = typeof first.path[0] === 'string' ? first.path[0] : undefined;
  const messages = problems.map((problem) =>
    problem.path.length === 0 ? problem.message : `"${showPath(problem.path)}": ${problem.message}`,
  );
  const more = moreProblems > 0 ? `; and ${moreProblems} more` : '';
  return {
    row,
    line,
    input,
    text: false,
    problem: {
      field,
      value: field === undefined ? undefined : input[field],
      message: messages.join('; ') + more,
    },
  };
}
