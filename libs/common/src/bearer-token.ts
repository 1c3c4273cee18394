import { createHash, timingSafeEqual } from 'node:crypto';

/** A shared-secret bearer token (the admin token, the metrics token), checked in constant time. */
export class BearerToken {
  private readonly expected: Buffer;

  constructor(secret: string) {
    this.expected = createHash('sha256').update(secret).digest();
  }

  /** Whether an `Authorization` header carries this token; the scheme is case-insensitive (RFC 9110). */
  matches(authorization: string | undefined): boolean {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
    // Hashing both sides gives equal lengths, so timingSafeEqual leaks nothing about the token.
    return token !== '' && timingSafeEqual(createHash('sha256').update(token).digest(), this.expected);
  }
}
