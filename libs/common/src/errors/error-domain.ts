/** The prefix of a route's error codes (`audio`, `video`, …): a plain string each domain registers. */
export type ErrorDomain = string;

/** The domain of errors on paths no domain registered: framing and routing refusals. */
export const DEFAULT_ERROR_DOMAIN: ErrorDomain = 'request';

/** An error as the filter settled it: HTTP status, qualified code, message (and a 500's error id). */
export interface SettledError {
  status: number;
  code: string;
  message: string;
  errorId?: string;
}

/**
 * The body of a domain whose errors are not `{error:{code,message}}` (the alternate provider's
 * envelope); a domain registers it with its prefixes.
 */
export type ErrorEnvelopeRenderer = (error: SettledError) => Record<string, unknown>;

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
  private readonly envelopes = new Map<ErrorDomain, ErrorEnvelopeRenderer>();

  /**
   * Throws when a prefix is already another domain's: two modules would disagree on its errors.
   * `envelope` replaces the `{error:{code,message}}` body on the domain's paths.
   */
  register(domain: ErrorDomain, pathPrefixes: readonly string[], envelope?: ErrorEnvelopeRenderer): void {
    if (envelope) this.envelopes.set(domain, envelope);
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

  /** The renderer of the path's domain when it has its own envelope. */
  envelopeOf(url: string): ErrorEnvelopeRenderer | undefined {
    return this.envelopes.get(this.domainOf(url));
  }

  /** `invalid_field` on an audio route → `audio.invalid_field`; full codes pass through. */
  qualify(code: string, url: string): string {
    return code.includes('.') ? code : `${this.domainOf(url)}.${code}`;
  }
}
