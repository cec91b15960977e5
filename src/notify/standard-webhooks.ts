/**
 * Signing as the Standard Webhooks specification says (standardwebhooks.com): the signed
 * content is `<webhook-id>.<webhook-timestamp>.<body>`, signed with HMAC-SHA256 under the
 * secret's bytes (the base64 after `whsec_`), sent as `webhook-signature: v1,<base64>`.
 */
import { createHmac } from 'node:crypto';

const PREFIX = 'whsec_';

/** The key bytes of a `whsec_…` secret, or undefined when it is not one. */
export function decodeWebhookSecret(secret: string): Buffer | undefined {
  if (!secret.startsWith(PREFIX)) return undefined;
  const base64 = secret.slice(PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return undefined;
  const key = Buffer.from(base64, 'base64');
  // the specification asks for 24 to 64 bytes; fewer is a typing error
  return key.length >= 16 && key.length <= 64 ? key : undefined;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of a message whose body is `body`, sent at `at`. */
export function signWebhook(key: Buffer, id: string, body: string, at = new Date()): SignedHeaders {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}
