import { createHmac } from 'node:crypto';

const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/**
 * The Kling API token (upstreams.md §3.1): an HS256 JWT signed with the secret key, `iss` the
 * access key, `nbf` five seconds back (clock skew), `exp` `ttlSeconds` ahead.
 */
export function klingToken(accessKey: string, secretKey: string, nowMs: number, ttlSeconds: number): string {
  const now = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = b64url(JSON.stringify({ iss: accessKey, exp: now + ttlSeconds, nbf: now - 5 }));
  const signature = createHmac('sha256', secretKey).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}
