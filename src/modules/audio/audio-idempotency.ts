import { hash } from 'node:crypto';
import { AudioErrorCode, audioInvalid } from './audio-errors.js';

/** 1 to 128 printable non-space ASCII characters (spec › Endpoints › Audio 2). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;

/**
 * The `Idempotency-Key` header as sent: absent → undefined; anything but one valid value
 * (empty, too long, spaces, non-ASCII, repeated header) → 400 before any work.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header) || !IDEMPOTENCY_KEY.test(header)) {
    throw audioInvalid('Idempotency-Key', 'must be one value of 1 to 128 printable non-space ASCII characters', AudioErrorCode.InvalidIdempotencyKey);
  }
  return header;
}

/** SHA-256 of the canonical request, hex (the one-shot `hash`: a third of `createHash`'s cost). */
export const requestHash = (canonical: string): string => hash('sha256', canonical, 'hex');
