/**
 * A multipart/form-data body of text fields, written as one string: the admin interface's
 * multi-record calls carry a few text fields (the records' JSON, and credentials in `params`
 * mode). undici's FormData would stream the same bytes part by part, at several times the cost
 * for a body of a few hundred kilobytes.
 */
import { randomBytes } from 'node:crypto';

export interface MultipartBody {
  body: string;
  contentType: string;
}

/** Field names porter sends are its own constants; anything else is refused, not escaped. */
const SAFE_NAME = /^[A-Za-z0-9_.-]+$/;

export function multipartBody(fields: readonly (readonly [string, string])[]): MultipartBody {
  for (const [name] of fields) {
    if (!SAFE_NAME.test(name))
      throw new Error(`form field name ${JSON.stringify(name)} is not plain`);
  }
  let boundary: string;
  do {
    boundary = `----porter-${randomBytes(16).toString('hex')}`;
    // a boundary must not occur in the content; a random one practically never does
  } while (fields.some(([, value]) => value.includes(boundary)));
  let body = '';
  for (const [name, value] of fields) {
    body += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  }
  body += `--${boundary}--\r\n`;
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
