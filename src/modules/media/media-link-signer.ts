import { createHmac, timingSafeEqual } from 'node:crypto';

export type LinkVerdict = 'valid' | 'invalid' | 'expired';

/** `exp` as it appears in a link: canonical decimal unix seconds. */
const EXP = /^(0|[1-9][0-9]{0,11})$/;
/** base64url of a 32-byte HMAC-SHA256, unpadded. */
const SIG = /^[A-Za-z0-9_-]{43}$/;

/**
 * Signature maths of signed media links: `sig = base64url(HMAC-SHA256(MEDIA_SIGNING_KEY, key + "\n" + exp))`.
 * Pure: the caller passes the time.
 */
export class MediaLinkSigner {
  constructor(private readonly secret: string) {
    if (secret.length < 32) throw new Error('media signing key must be at least 32 characters');
  }

  sign(key: string, expSeconds: number): string {
    return this.mac(key, String(expSeconds)).toString('base64url');
  }

  /**
   * Checks a link's `exp` and `sig` as received (strings, or anything a query parser gave).
   * The signature is checked first, in constant time, so a forged link learns nothing about
   * expiry; a genuine link is expired from its `exp` second on.
   */
  verify(key: string, exp: unknown, sig: unknown, now: Date): LinkVerdict {
    if (typeof exp !== 'string' || typeof sig !== 'string' || !EXP.test(exp) || !SIG.test(sig)) return 'invalid';
    const given = Buffer.from(sig, 'base64url');
    const expected = this.mac(key, exp);
    // Both are 32 bytes here (the pattern fixes the length), as timingSafeEqual requires.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return now.getTime() >= Number(exp) * 1000 ? 'expired' : 'valid';
  }

  private mac(key: string, exp: string): Buffer {
    return createHmac('sha256', this.secret).update(`${key}\n${exp}`, 'utf8').digest();
  }
}
