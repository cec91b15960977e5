/**
 * What an email address must look like, for the importer and the sandbox alike: the shape of
 * HTML's `type=email` (a name, "@", a domain of dot-separated labels; `ann@x` passes), letters
 * of any script allowed, at most 254 characters. A bounded check, not RFC 5322.
 */

/** Longest address accepted (the SMTP limit of a path). */
export const MAX_EMAIL_CHARS = 254;
const MAX_LOCAL_CHARS = 64;

const LOCAL = /^[\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-]+$/u;
const LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;

/** Why a non-empty text is not an email address, or undefined when it is one. */
export function emailProblem(email: string): string | undefined {
  if (email.length > MAX_EMAIL_CHARS) return `is longer than ${MAX_EMAIL_CHARS} characters`;
  const at = email.lastIndexOf('@');
  if (at < 0) return 'has no "@"';
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (local === '') return 'has no name before "@"';
  if (local.length > MAX_LOCAL_CHARS) {
    return `has more than ${MAX_LOCAL_CHARS} characters before "@"`;
  }
  if (!LOCAL.test(local)) {
    return /\s/u.test(local) ? 'holds a space' : 'holds a character not allowed before "@"';
  }
  if (domain === '') return 'has no domain after "@"';
  if (!domain.split('.').every((label) => LABEL.test(label))) {
    return /\s/u.test(domain) ? 'holds a space' : `has no valid domain after "@"`;
  }
  return undefined;
}
