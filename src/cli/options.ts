/** Parsers for command-line option values; a bad value stops the command naming the option. */
import { InvalidArgumentError, type Command } from 'commander';
import { TARGET_NAME, TARGET_NAME_TEXT } from '../targets/target-file.js';
import { failureLimit } from '../execute/failure-limit.js';

export function positiveInteger(name: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed <= 0) {
      throw new InvalidArgumentError(`${name} must be a whole number above 0`);
    }
    return parsed;
  };
}

/** A TCP port, 0 (any free port) to 65535. */
export function portNumber(name: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!/^\d+$/.test(value) || parsed > 65_535) {
      throw new InvalidArgumentError(`${name} must be a port number from 0 to 65535`);
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

/** --max-failures: a whole number or a percentage ("5%"), read the way the import reads it. */
export function failureLimitText(name: string): (value: string) => string {
  return (value) => {
    const text = value.trim();
    let valid = text !== '';
    try {
      failureLimit(text, 0);
    } catch {
      valid = false;
    }
    if (!valid) {
      throw new InvalidArgumentError(`${name} must be a number of records or a percentage like 5%`);
    }
    return text;
  };
}

/** A target name option's parser: the name's shape is checked here, its existence when used. */
export function targetOption(name: string): (value: string) => string {
  return (value) => {
    if (!TARGET_NAME.test(value)) {
      throw new InvalidArgumentError(`${name}: not a target name (${TARGET_NAME_TEXT}).`);
    }
    return value;
  };
}

/** `--target NAME`: the admin server a command works on, by name (see `porter targets`). */
export function addTargetOption(
  command: Command,
  text = 'the target (named admin server) to work on; see porter targets',
): Command {
  return command.option(
    '--target <name>',
    `${text} (default: the target "default", when one is configured)`,
    targetOption('--target'),
  );
}
