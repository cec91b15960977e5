/** Bearer-token authentication of the producer API, compared in constant time. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { PorterError } from '../errors/porter-error.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Throws PORTER_UNAUTHORIZED unless the Authorization header carries the token. */
export function checkBearer(header: string | undefined, token: string): void {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!match || !timingSafeEqual(digest(match[1]!.trim()), digest(token))) {
    throw new PorterError('PORTER_UNAUTHORIZED', 'send Authorization: Bearer <PORTER_API_TOKEN>');
  }
}
