/**
 * One POST of a JSON body to a webhook or chat receiver: cut off at a timeout (a receiver that
 * hangs), a redirect followed only to the same origin (never to another host), the host checked
 * against the allow-list before each request. A 2xx answer is delivered; anything else throws a
 * DeliveryError.
 */
import { request } from 'undici';
import { DeliveryError } from './delivery-error.js';
import { hostAllowed, sameOrigin } from './host-policy.js';

export interface PostOptions {
  headers: Record<string, string>;
  timeoutMs: number;
  allowedHosts?: readonly string[];
  /** Same-origin redirects followed at most. @defaultValue 3 */
  maxRedirects?: number;
  /** Aborts the request (a stopping worker). */
  signal?: AbortSignal;
}

/** Posts the body; returns the receiver's status. */
export async function postJson(url: string, body: string, options: PostOptions): Promise<number> {
  let current = url;
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  for (let redirects = 0; ; redirects++) {
    const host = new URL(current).hostname;
    if (!hostAllowed(host, options.allowedHosts)) {
      throw new DeliveryError(`host ${host} is not in PORTER_NOTIFY_ALLOWED_HOSTS`, true);
    }
    let answer;
    try {
      answer = await request(current, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...options.headers },
        body,
        signal,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
    } catch (error) {
      if (options.signal?.aborted) throw new DeliveryError('stopped: the worker is shutting down');
      if (timeout.aborted) {
        throw new DeliveryError(`no answer within ${options.timeoutMs} ms; cut off`);
      }
      const code = (error as { code?: string }).code;
      throw new DeliveryError(`could not reach ${host}${code ? ` (${code})` : ''}`);
    }
    // the answer's body is never kept: a receiver's page says nothing porter needs
    await answer.body.dump().catch(() => {});
    const { statusCode } = answer;
    if (statusCode >= 200 && statusCode < 300) return statusCode;
    if (statusCode >= 300 && statusCode < 400) {
      const location = answer.headers.location;
      const to = Array.isArray(location) ? location[0] : location;
      if (to === undefined)
        throw new DeliveryError(`HTTP ${statusCode} without a Location`, false, statusCode);
      if (!sameOrigin(current, to)) {
        throw new DeliveryError(
          `HTTP ${statusCode} redirects to another host (${safeHost(current, to)}); not followed`,
          true,
          statusCode,
        );
      }
      if (redirects >= (options.maxRedirects ?? 3)) {
        throw new DeliveryError(
          `more than ${options.maxRedirects ?? 3} redirects`,
          false,
          statusCode,
        );
      }
      current = new URL(to, current).toString();
      continue;
    }
    throw new DeliveryError(`HTTP ${statusCode} from ${host}`, false, statusCode);
  }
}

function safeHost(from: string, location: string): string {
  try {
    return new URL(location, from).host;
  } catch {
    return 'an invalid URL';
  }
}
