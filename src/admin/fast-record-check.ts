/**
 * A fast yes-or-not-sure check of an answer's record against its zod object schema, compiled
 * once from the schema itself so the two cannot drift. "Yes" means zod accepts the record and
 * would give back an equal object with its keys in the same order, so the record can be used
 * as it is; "not sure" means zod has to judge it (and report it when it is wrong). A million
 * records of an export (or answered by writes) then cost a million plain type checks instead of a
 * million zod parses.
 */

/** The parts of a zod definition this check understands; anything else makes it defer. */
interface ZodDef {
  type: string;
  innerType?: ZodLike;
  element?: ZodLike;
  keyType?: ZodLike;
  valueType?: ZodLike;
  shape?: Record<string, ZodLike>;
  catchall?: ZodLike;
  checks?: { _zod: { def: { check: string; format?: string; minimum?: number } } }[];
}
interface ZodLike {
  _zod: { def: ZodDef };
}

export type ValueCheck = (value: unknown) => boolean;

/** The commonest value checks, made inline rather than through a function call. */
export type Kind = 'string' | 'safe-integer' | 'other';

export interface FieldCheck {
  key: string;
  required: boolean;
  kind: Kind;
  accepts: ValueCheck;
}

/** The schema holds something this check does not understand. */
class Unsupported extends Error {}

/** Says true only when zod would accept `record` and give back an equal one, keys in order. */
export type FastRecordCheck = (record: unknown) => boolean;

/** The fast check of a zod object schema; one that always defers when the schema is unusual. */
export function compileRecordCheck(schema: unknown): FastRecordCheck {
  try {
    return objectCheck(schema as ZodLike);
  } catch (error) {
    if (error instanceof Unsupported) return () => false;
    throw error;
  }
}

/** Whether the schema was understood: a test keeps every answer schema on the fast path. */
export function isUnderstood(schema: unknown): boolean {
  try {
    objectCheck(schema as ZodLike);
    return true;
  } catch (error) {
    if (error instanceof Unsupported) return false;
    throw error;
  }
}

/**
 * The fields of a loose object schema in shape order, each with its check, for a reader that
 * checks records as it parses them (the same rules as compileRecordCheck: known keys in shape
 * order, unknown ones after them); undefined when the schema is unusual.
 */
export function fieldChecksOf(schema: unknown): readonly FieldCheck[] | undefined {
  try {
    return objectFields(schema as ZodLike);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

function objectFields(schema: ZodLike): FieldCheck[] {
  const def = schema._zod.def;
  if (def.type !== 'object' || !def.shape || (def.checks?.length ?? 0) > 0) {
    throw new Unsupported(def.type);
  }
  // unknown keys kept as they are (a loose object); a strict or stripping one changes records
  if (def.catchall?._zod.def.type !== 'unknown') throw new Unsupported('catchall');
  // in shape order: zod gives the known keys back in that order
  return Object.entries(def.shape).map(([key, field]) => ({ key, ...fieldCheck(field) }));
}

function objectCheck(schema: ZodLike): FastRecordCheck {
  const fields = objectFields(schema);
  const known = new Set(fields.map((field) => field.key));
  const requiredCount = fields.filter((field) => field.required).length;
  return (record) => {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) return false;
    const values = record as Record<string, unknown>;
    let next = 0;
    let unknownSeen = false;
    let required = 0;
    for (const key in values) {
      // the key is a field at or after the last one seen, or out of order, or unknown
      let position = next;
      while (position < fields.length && fields[position]!.key !== key) position++;
      if (position === fields.length) {
        // zod drops an own __proto__ key; unknown keys go after the known ones
        if (known.has(key) || key === '__proto__') return false;
        unknownSeen = true;
        continue;
      }
      if (unknownSeen) return false;
      next = position + 1;
      const field = fields[position]!;
      const value = values[key];
      if (field.kind === 'string') {
        if (typeof value !== 'string') return false;
      } else if (field.kind === 'safe-integer') {
        if (!Number.isSafeInteger(value)) return false;
      } else if (!field.accepts(value)) return false;
      if (field.required) required++;
    }
    return required === requiredCount;
  };
}

/** The inline kind of a value check, when it is a common one. */
function kindOf(schema: ZodLike): Kind {
  const def = schema._zod.def;
  const checks = def.checks ?? [];
  if (def.type === 'string' && checks.length === 0) return 'string';
  if (
    def.type === 'number' &&
    checks.length > 0 &&
    checks.every(({ _zod }) => _zod.def.check === 'number_format' && _zod.def.format === 'safeint')
  ) {
    return 'safe-integer';
  }
  return 'other';
}

/** A field of an object's shape: whether it must be present, and what its value may be. */
function fieldCheck(field: ZodLike): Omit<FieldCheck, 'key'> {
  const def = field._zod.def;
  let value = field;
  let required = true;
  if (def.type === 'optional' && def.innerType) {
    // a JSON value is never undefined: present means it meets the inner type
    value = def.innerType;
    required = false;
  } else if (def.type === 'nonoptional' && def.innerType?._zod.def.type === 'optional') {
    value = present(def.innerType._zod.def.innerType);
  }
  return { required, kind: kindOf(value), accepts: valueCheck(value) };
}

function valueCheck(schema: ZodLike): ValueCheck {
  const def = schema._zod.def;
  const checks = def.checks ?? [];
  switch (def.type) {
    case 'unknown':
      return () => true;
    case 'boolean':
      noChecks(def);
      return (value) => typeof value === 'boolean';
    case 'string': {
      let minimum = 0;
      for (const check of checks) {
        const { check: kind, minimum: min } = check._zod.def;
        if (kind !== 'min_length' || min === undefined) throw new Unsupported(kind);
        minimum = Math.max(minimum, min);
      }
      return (value) => typeof value === 'string' && value.length >= minimum;
    }
    case 'number': {
      const formats = checks.map((check) => check._zod.def);
      if (formats.length === 0) return (value) => typeof value === 'number' && isFinite(value);
      if (formats.every((check) => check.check === 'number_format' && check.format === 'safeint')) {
        return (value) => Number.isSafeInteger(value);
      }
      throw new Unsupported('number checks');
    }
    case 'nullable': {
      noChecks(def);
      const inner = valueCheck(present(def.innerType));
      return (value) => value === null || inner(value);
    }
    case 'array': {
      noChecks(def);
      const element = valueCheck(present(def.element));
      return (value) => Array.isArray(value) && value.every(element);
    }
    case 'record': {
      noChecks(def);
      const keyType = present(def.keyType)._zod.def;
      if (keyType.type !== 'string' || (keyType.checks?.length ?? 0) > 0) {
        throw new Unsupported('record key');
      }
      const entry = valueCheck(present(def.valueType));
      return (value) => {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
        // zod copies a record by assignment, which an own __proto__ key would not survive
        if (Object.hasOwn(value, '__proto__')) return false;
        for (const key in value) if (!entry((value as Record<string, unknown>)[key])) return false;
        return true;
      };
    }
    default:
      throw new Unsupported(def.type);
  }
}

function noChecks(def: ZodDef): void {
  if ((def.checks?.length ?? 0) > 0) throw new Unsupported(`${def.type} checks`);
}

function present(schema: ZodLike | undefined): ZodLike {
  if (!schema) throw new Unsupported('missing inner type');
  return schema;
}
