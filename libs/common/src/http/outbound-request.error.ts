/** Why an outbound request to a user-supplied URL was refused or failed (DESIGN §7). */
export type OutboundFailureReason =
  | 'invalid_url'
  | 'scheme_not_allowed'
  | 'address_not_allowed'
  | 'dns_failed'
  | 'timeout'
  | 'too_large'
  | 'network'
  | 'redirect_refused';

/**
 * `message` is safe to show the client who supplied the URL: it says what was refused, never
 * what a host name resolved to or which address a connection reached (that would let a client
 * map the internal network through our resolver). `detail` says everything, for the log.
 */
export class OutboundRequestError extends Error {
  readonly detail: string;

  constructor(
    readonly reason: OutboundFailureReason,
    message: string,
    detail?: string,
  ) {
    super(message);
    this.name = 'OutboundRequestError';
    this.detail = detail ?? message;
  }
}
