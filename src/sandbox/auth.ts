/**
 * Authentication, off unless configured, as the real product offers it (real-product-notes.md):
 * an API key as the `apikey` query parameter or request header, never a form field; user and
 * password as HTTP Basic or as `user`/`pass` request parameters (query or form field).
 * With both configured, either way in is accepted.
 * Secrets are compared in constant time and never logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SandboxError } from './errors.js';
import type { RequestParams } from './params.js';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Constant-time equality of two strings (hashing first evens out their lengths). */
function sameSecret(given: string | undefined, expected: Buffer): boolean {
  return given !== undefined && timingSafeEqual(digest(given), expected);
}

/** Checks a request's credentials against the configured ones. */
export class Authenticator {
  private readonly apiKey: Buffer | undefined;
  private readonly user: Buffer | undefined;
  private readonly password: Buffer | undefined;

  constructor(options: { apiKey?: string; user?: string; password?: string }) {
    this.apiKey = options.apiKey === undefined ? undefined : digest(options.apiKey);
    if (options.user !== undefined && options.password !== undefined) {
      this.user = digest(options.user);
      this.password = digest(options.password);
    }
  }

  get enabled(): boolean {
    return this.apiKey !== undefined || this.user !== undefined;
  }

  /** Throws 401 unless the request carries an accepted credential. */
  check(headers: IncomingHttpHeaders, params: RequestParams): void {
    if (!this.enabled) return;
    if (this.apiKey && this.checkApiKey(headers, params, this.apiKey)) return;
    if (this.user && this.password && this.checkUser(headers, params, this.user, this.password))
      return;
    const challenge: Record<string, string> = this.user
      ? { 'www-authenticate': 'Basic realm="porter sandbox", charset="UTF-8"' }
      : {};
    throw new SandboxError('UNAUTHORIZED', `missing or wrong credentials: ${this.accepted()}`, {
      headers: challenge,
    });
  }

  private checkApiKey(headers: IncomingHttpHeaders, params: RequestParams, key: Buffer): boolean {
    const header = headers.apikey;
    const fromHeader = Array.isArray(header) ? header[0] : header;
    return sameSecret(fromHeader, key) || sameSecret(params.fromQuery('apikey'), key);
  }

  private checkUser(
    headers: IncomingHttpHeaders,
    params: RequestParams,
    user: Buffer,
    password: Buffer,
  ): boolean {
    const basic = parseBasic(headers.authorization);
    if (basic && sameSecret(basic.user, user) && sameSecret(basic.password, password)) return true;
    return sameSecret(params.get('user'), user) && sameSecret(params.get('pass'), password);
  }

  private accepted(): string {
    const ways: string[] = [];
    if (this.apiKey) ways.push('an apikey header or query parameter');
    if (this.user) ways.push('HTTP Basic or user/pass parameters');
    return `send ${ways.join(', or ')}`;
  }
}

/** User and password of an HTTP Basic Authorization header. */
function parseBasic(header: string | undefined): { user: string; password: string } | undefined {
  const match = header?.match(/^\s*Basic\s+([A-Za-z0-9+/=]+)\s*$/i);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
