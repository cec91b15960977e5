/** --max-failures: an import stops once more records failed than it allows. */
import { PorterError } from '../errors/porter-error.js';

/** The most failed records allowed, from "N" or "N%" of `total`; undefined means no limit. */
export function failureLimit(text: string | undefined, total: number): number | undefined {
  if (text === undefined || text === '') return undefined;
  const match = /^(\d+(?:\.\d+)?)(%?)$/.exec(text.trim());
  if (!match) {
    throw new PorterError(
      'PORTER_USAGE',
      `max failures: "${text}" is not a number or a percentage like 5%`,
    );
  }
  const value = Number(match[1]);
  return match[2] === '%' ? Math.floor((value / 100) * total) : Math.floor(value);
}

/**
 * The reason to stop, when `failed` passed the limit. A percentage of a total not known yet (a
 * streamed import's upload is still received: total < 0, see knownTotal) is not checked until
 * it is.
 */
export function failureLimitReason(
  text: string | undefined,
  failed: number,
  total: number,
): string | undefined {
  if (total < 0 && text?.trim().endsWith('%') === true) return undefined;
  const limit = failureLimit(text, total);
  if (limit === undefined || failed <= limit) return undefined;
  return `stopped: ${failed} records failed, more than --max-failures ${text}`;
}

/** The import's total for failureLimitReason: -1 until its upload is whole (a streamed import). */
export function knownTotal(info: { total: number; receivedAt?: string }): number {
  return info.receivedAt === undefined ? -1 : info.total;
}
