import { DomainError } from '../../../libs/common/index.js';
import { TextUpstreamError } from '../../../libs/providers/index.js';
import { TextErrorCode } from './text-errors.js';

/** An upstream refusal or failure as the client sees it. */
export function toDomainError(error: unknown): unknown {
  if (!(error instanceof TextUpstreamError)) return error;
  const message = `upstream: ${error.message}`;
  const headers: Record<string, string> = error.retryAfterSeconds ? { 'retry-after': String(error.retryAfterSeconds) } : {};
  switch (true) {
    case error.upstreamStatus === 'STREAM_INTERRUPTED':
      return new DomainError(502, TextErrorCode.StreamInterrupted, message);
    case error.status === 400:
      return new DomainError(400, TextErrorCode.UpstreamRejected, message);
    case error.status === 429:
      return new DomainError(429, TextErrorCode.UpstreamRateLimited, message, headers);
    case error.status === 503:
      return new DomainError(503, TextErrorCode.UpstreamUnavailable, message, headers);
    case error.status === 504:
      return new DomainError(504, TextErrorCode.UpstreamTimeout, message);
    default:
      return new DomainError(502, TextErrorCode.UpstreamError, message);
  }
}
