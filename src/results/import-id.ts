/**
 * Import ids: `imp_` + 10 characters of time + 12 random, Crockford base32, so ids sort by
 * creation. Within one millisecond of one process the random part counts up, so order holds.
 */
import { randomBytes } from 'node:crypto';

// Crockford's alphabet is in ascending ASCII order, so string order equals numeric order.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_CHARS = 10;
const RANDOM_CHARS = 12;
const RANDOM_LIMIT = 32n ** BigInt(RANDOM_CHARS);

/** Ids from outside (URLs, CLI) must match this before they become part of a key. */
export const IMPORT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

let lastTime = -1;
let lastRandom = 0n;

function encode(value: bigint, length: number): string {
  let text = '';
  let rest = value;
  for (let index = 0; index < length; index++) {
    text = ALPHABET[Number(rest % 32n)] + text;
    rest /= 32n;
  }
  return text;
}

/** A new URL-safe id that sorts after every id this process made before. */
export function newImportId(now: number = Date.now()): string {
  if (now <= lastTime && lastRandom + 1n < RANDOM_LIMIT) {
    lastRandom += 1n;
  } else {
    lastTime = Math.max(now, lastTime);
    // Top bit clear leaves room to count up within the millisecond.
    lastRandom = BigInt(`0x${randomBytes(8).toString('hex')}`) % (RANDOM_LIMIT / 2n);
  }
  return `imp_${encode(BigInt(lastTime), TIME_CHARS)}${encode(lastRandom, RANDOM_CHARS)}`;
}

export function isValidImportId(value: string): boolean {
  return IMPORT_ID_PATTERN.test(value);
}
