/**
 * A refusal or failure that the client should see, with the spec's dotted error code.
 *
 * Codes may be written in full (`video.invalid_field`) by a domain, or relative
 * (`invalid_field`) by shared code such as the API-key guard, the validation pipe and the
 * wallet. A relative code is qualified with the domain of the route that answered
 * (ErrorDomains, error-domain.ts), so the 401 of an audio route reads `audio.unauthorized`.
 */
export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra headers the answer must carry (e.g. `Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * An error whose body is not the `{error:{code,message}}` envelope (the alternate provider's
 * envelope). The global filter writes `body()` as it is.
 */
export abstract class EnvelopeError extends Error {
  abstract readonly status: number;
  abstract body(): Record<string, unknown>;
  /** Extra headers the answer must carry (e.g. `Allow`). */
  readonly headers: Record<string, string> = {};
}

/** Codes used by shared code on every route; qualified with the route's domain. */
export enum CommonErrorCode {
  Unauthorized = 'unauthorized',
  InvalidField = 'invalid_field',
  UnknownField = 'unknown_field',
  NotFound = 'not_found',
  InsufficientBalance = 'insufficient_balance',
  Conflict = 'conflict',
  MethodNotAllowed = 'method_not_allowed',
  Unavailable = 'unavailable',
  Internal = 'internal_error',
}

export const invalidField = (field: string, why: string): DomainError =>
  new DomainError(400, CommonErrorCode.InvalidField, `${field}: ${why}`);

export const notFound = (what: string): DomainError =>
  new DomainError(404, CommonErrorCode.NotFound, `${what} not found`);

/** Bounded-body and framing errors carry `request.` on every route (DESIGN §4). */
export enum RequestErrorCode {
  InvalidJson = 'request.invalid_json',
  BodyTooLarge = 'request.body_too_large',
  UnsupportedMediaType = 'request.unsupported_media_type',
  RouteNotFound = 'request.route_not_found',
  /** JSON nested deeper than REQUEST_MAX_DEPTH. */
  TooDeep = 'request.too_deep',
  TooManyItems = 'request.too_many_items',
  // Refused by the HTTP layer before routing (decisions.md, "Framework errors").
  BadUrl = 'request.bad_url',
  UriTooLong = 'request.uri_too_long',
  HeaderTooLarge = 'request.header_too_large',
  Timeout = 'request.timeout',
  MalformedHttp = 'request.malformed_http',
}
