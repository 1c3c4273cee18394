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

export class OutboundRequestError extends Error {
  constructor(
    readonly reason: OutboundFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundRequestError';
  }
}
