import { ErrorDomainsModule } from './error-domains.module.js';

/**
 * The audio routes are being built on another branch (src/modules/audio): their error prefixes
 * wait here, imported by AppModule, until AudioModule lists these two lines in its own `imports`
 * and this file is deleted.
 */
export const PENDING_ERROR_PREFIXES = [
  ErrorDomainsModule.forFeature({ domain: 'audio', pathPrefixes: ['/v1/audio/', '/api/svc/v1/audio/'] }),
  ErrorDomainsModule.forFeature({ domain: 'realtime', pathPrefixes: ['/v1/audio/realtime'] }),
];
