/**
 * Which domain prefix a route's errors carry, decided from the URL path in one table.
 * The path is used (not controller metadata) so that errors raised before routing —
 * an unknown path, a body parser failure — read the same as those raised inside.
 */
export type ErrorDomain =
  | 'video'
  | 'alternate'
  | 'audio'
  | 'realtime'
  | 'text'
  | 'image'
  | 'webhook'
  | 'wallet'
  | 'admin'
  | 'media'
  | 'request';

/** Ordered: the first prefix that matches wins. */
const DOMAIN_BY_PATH_PREFIX: ReadonlyArray<readonly [string, ErrorDomain]> = [
  ['/admin/', 'admin'],
  ['/v1/audio/realtime', 'realtime'],
  ['/v1/audio/', 'audio'],
  ['/api/svc/v1/audio/', 'audio'],
  ['/v1/alternate/', 'alternate'],
  ['/v1/contents/', 'video'],
  ['/contents/', 'video'],
  ['/api/svc/v1/chat/', 'text'],
  ['/api/svc/v1/responses', 'text'],
  ['/api/svc/v1/models', 'text'],
  ['/api/svc/v1/images/', 'image'],
  ['/api/svc/v1/webhook-endpoints', 'webhook'],
  ['/api/svc/v1/wallet', 'wallet'],
  ['/media/', 'media'],
];

export function errorDomainOf(url: string): ErrorDomain {
  const path = url.split('?', 1)[0] ?? url;
  for (const [prefix, domain] of DOMAIN_BY_PATH_PREFIX) {
    if (path === prefix.replace(/\/$/, '') || path.startsWith(prefix)) return domain;
  }
  return 'request';
}

/** `invalid_field` on an audio route → `audio.invalid_field`; full codes pass through. */
export function qualifyErrorCode(code: string, url: string): string {
  return code.includes('.') ? code : `${errorDomainOf(url)}.${code}`;
}
