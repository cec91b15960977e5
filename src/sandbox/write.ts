/**
 * One multi-record write, the same for every resource: read the JSON array from its form
 * field, plan every record against a draft, then apply. Atomic by default: when one
 * record fails nothing is applied; in partial mode the records before it are; in omit mode
 * every other record is, and the failing ones are left out of a 200 answer without an error.
 */
import type { z } from 'zod';
import { badRequest, SandboxError } from './errors.js';
import type { BatchFailure } from './options.js';
import type { WriteMethod } from './stats.js';

/** What a resource knows about checking and applying its records. */
export interface WritePlanner<Op> {
  /** Checks one record against the draft, records its effect there, and says what applying will do. */
  plan(record: unknown, method: WriteMethod): Op;
  /** Applies one planned operation to the store; returns its answer record. */
  apply(op: Op): unknown;
}

export interface WriteOutcome {
  /** Answer records of the applied operations, in request order. */
  answer: unknown[];
  /** Number of records applied (all of them, a prefix in partial mode, the good ones in omit mode). */
  applied: number;
  /** The failing record's error; with it, the answer is an error answer. */
  error?: SandboxError;
}

/**
 * Plans all records, then applies all of them, (partial) those before the failing one, or
 * (omit) all but the failing ones.
 */
export function runWrite<Op>(
  records: readonly unknown[],
  method: WriteMethod,
  planner: WritePlanner<Op>,
  batchFailure: BatchFailure,
): WriteOutcome {
  const ops: Op[] = [];
  let error: SandboxError | undefined;
  for (let index = 0; index < records.length; index++) {
    try {
      ops.push(planner.plan(records[index], method));
    } catch (failure) {
      if (!(failure instanceof SandboxError)) throw failure;
      // a planner checks a record before it changes the draft, so a skipped one leaves it as it was
      if (batchFailure === 'omit') continue;
      error = failure.atIndex(index);
      break;
    }
  }
  if (error && batchFailure === 'atomic') return { answer: [], applied: 0, error };
  // Planning and applying run in one synchronous stretch, so no other request can slip in between.
  const answer = ops.map((op) => planner.apply(op));
  return { answer, applied: ops.length, error };
}

/** The records of a write: the form field's text parsed as a JSON array. */
export function readRecords(
  fields: ReadonlyMap<string, string> | undefined,
  field: string,
): unknown[] {
  const text = fields?.get(field);
  if (text === undefined) {
    throw badRequest(`form field "${field}" is missing: send the records as a JSON array in it`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw badRequest(`form field "${field}" is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(data))
    throw badRequest(`form field "${field}" must hold a JSON array of records`);
  return data;
}

/** Parses one record with its resource schema; a type error becomes 400 naming the field. */
export function parseRecord<T>(schema: z.ZodType<T>, record: unknown): T {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    throw badRequest('each record must be a JSON object');
  }
  const result = schema.safeParse(record);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  throw badRequest(`${path ? `${path}: ` : ''}${issue?.message ?? 'invalid record'}`);
}

/** A required string field that is not blank: empty or only white space counts as missing. */
export function requireName(value: string | undefined, field: string): string {
  if (value === undefined || value.trim() === '')
    throw badRequest(`${field} is required and must not be empty or blank`);
  return value;
}

/** Drops repeated values, keeping the first of each (lists here are sets). */
export function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
