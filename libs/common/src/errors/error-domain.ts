/** The prefix of a route's error codes (`audio`, `video`, …): a plain string each domain registers. */
export type ErrorDomain = string;

/** The domain of errors on paths no domain registered: framing and routing refusals. */
export const DEFAULT_ERROR_DOMAIN: ErrorDomain = 'request';

/**
 * Which domain prefix a route's errors carry, decided from the URL path: each domain registers
 * its path prefixes (ErrorDomainsModule.forFeature, at module init, before the app listens) and
 * the longest matching prefix wins. The path is used (not controller metadata) so that errors
 * raised before routing — an unknown path, a body parser failure — read the same as those
 * raised inside.
 */
export class ErrorDomains {
  /** Longest prefix first, so `/v1/audio/realtime` wins over `/v1/audio/`. */
  private prefixes: Array<readonly [string, ErrorDomain]> = [];

  /** Throws when a prefix is already another domain's: two modules would disagree on its errors. */
  register(domain: ErrorDomain, pathPrefixes: readonly string[]): void {
    for (const prefix of pathPrefixes) {
      const owner = this.prefixes.find(([known]) => known === prefix)?.[1];
      if (owner === domain) continue;
      if (owner !== undefined) throw new Error(`error prefix ${prefix} is registered for "${owner}" and "${domain}"`);
      this.prefixes.push([prefix, domain]);
    }
    this.prefixes.sort(([a], [b]) => b.length - a.length);
  }

  domainOf(url: string): ErrorDomain {
    const path = url.split('?', 1)[0] ?? url;
    for (const [prefix, domain] of this.prefixes) {
      if (path === prefix.replace(/\/$/, '') || path.startsWith(prefix)) return domain;
    }
    return DEFAULT_ERROR_DOMAIN;
  }

  /** `invalid_field` on an audio route → `audio.invalid_field`; full codes pass through. */
  qualify(code: string, url: string): string {
    return code.includes('.') ? code : `${this.domainOf(url)}.${code}`;
  }
}
