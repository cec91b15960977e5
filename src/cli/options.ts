/** Parsers for command-line option values; a bad value stops the command naming the option. */
import { InvalidArgumentError } from 'commander';

export function positiveInteger(name: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed <= 0) {
      throw new InvalidArgumentError(`${name} must be a whole number above 0`);
    }
    return parsed;
  };
}

export function oneOf<T extends string>(name: string, allowed: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`${name} must be one of ${allowed.join(', ')}`);
    }
    return value as T;
  };
}

export function listOf<T extends string>(
  name: string,
  allowed: readonly T[],
): (value: string) => T[] {
  return (value) => value.split(',').map((item) => oneOf(name, allowed)(item.trim()));
}
