/**
 * What a session keeps that only its own browser may unlock. Redis holds a session under the
 * sha256 of its cookie's id, never the id; a key derived from the id (HKDF) seals what the
 * session must not give away to whoever reads Redis: the provider's tokens of an OpenID Connect
 * session (AES-256-GCM), and the proof that a dashboard session was opened with PORTER_API_TOKEN
 * (an HMAC, from which the token cannot be guessed without the cookie).
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

function keyOf(sessionId: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', sessionId, 'porter-session', purpose, 32));
}

/** `text` sealed with the session's key: iv.ciphertext.tag, base64url. */
export function seal(sessionId: string, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(sessionId, 'seal'), iv);
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return [iv, sealed, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.');
}

/** The text `seal` sealed with this session's key, or undefined when it does not open. */
export function unseal(sessionId: string, sealed: string): string | undefined {
  const [iv, body, tag] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !body || !tag || iv.length !== 12 || tag.length !== 16) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(sessionId, 'seal'), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** A proof of `secret` bound to the session: it says nothing of the secret without the id. */
export function sessionMac(sessionId: string, secret: string): string {
  return createHmac('sha256', keyOf(sessionId, 'mac')).update(secret).digest('base64url');
}
