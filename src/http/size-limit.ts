/** Counts the bytes of an upload as they stream and stops it past the limit. */
import { Transform, type TransformCallback } from 'node:stream';
import { PorterError } from '../errors/porter-error.js';

export function uploadTooLarge(limitBytes: number): PorterError {
  return new PorterError(
    'PORTER_UPLOAD_TOO_LARGE',
    `the upload is larger than ${limitBytes} bytes (PORTER_MAX_UPLOAD_BYTES); split it into smaller files`,
  );
}

/** A pass-through stream that fails with PORTER_UPLOAD_TOO_LARGE once more than `limitBytes` went through. */
export function limitBytes(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > limit) callback(uploadTooLarge(limit));
      else callback(null, chunk);
    },
  });
}
