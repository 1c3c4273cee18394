import { EnvelopeError, type SettledError } from '../../../libs/common/index.js';
import { ALTERNATE_PROVIDER_NAME } from '../../../libs/providers/index.js';

/**
 * Every `error_code` of the alternate-provider routes. Codes raised by shared code without a
 * domain (the key guard's `unauthorized`, the validation pipe's `invalid_field` and
 * `unknown_field`, the wallet's `insufficient_balance`) read `provider.<code>` on these routes;
 * framing errors keep their `request.` codes (docs/alternate-video.md › Errors).
 */
export enum AlternateErrorCode {
  InvalidField = 'provider.invalid_field',
  UnknownField = 'provider.unknown_field',
  InvalidImage = 'provider.invalid_image',
  /** The upstream refused the create; `error_params.upstreamCode` says why (spec table). */
  RequestFailed = 'provider.request_failed',
  Unavailable = 'provider.unavailable',
  OperationNotSupported = 'provider.operation_not_supported',
  InvalidSignature = 'provider.invalid_signature',
}

/** `upstreamCode` when no upstream code applies: Kling answers 0 when it reports no error. */
const NO_UPSTREAM_CODE = 0;

/**
 * The alternate envelope (spec, Errors › Envelopes): `error_params` always has its three fields.
 * `upstreamCode` is the upstream's error code, or 0 (Kling's own "no error" code) when the upstream
 * was not asked or answered without one: a client's schema always finds an integer there.
 */
export function alternateEnvelope(error: SettledError & { upstreamCode?: number }): Record<string, unknown> {
  const params: Record<string, unknown> = { provider: ALTERNATE_PROVIDER_NAME, status: error.status, upstreamCode: error.upstreamCode ?? NO_UPSTREAM_CODE };
  const body: Record<string, unknown> = { error_code: error.code, error: error.message, error_params: params };
  if (error.errorId) body.error_id = error.errorId;
  return body;
}

/** An alternate-provider error raised anywhere (also on the shared task routes), written in its envelope. */
export class AlternateError extends EnvelopeError {
  override readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    readonly code: AlternateErrorCode,
    message: string,
    readonly upstreamCode?: number,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AlternateError';
    this.headers = headers;
  }

  body(): Record<string, unknown> {
    return alternateEnvelope({ status: this.status, code: this.code, message: this.message, upstreamCode: this.upstreamCode });
  }
}

export const alternateInvalid = (field: string, why: string, code: AlternateErrorCode = AlternateErrorCode.InvalidField): AlternateError =>
  new AlternateError(400, code, `${field}: ${why}`);

interface UpstreamRow {
  from: number;
  to: number;
  status: number;
  message: string;
}

/**
 * The spec's upstream code table (Errors › Envelopes). 5000–5002 are spread over 502/503/504:
 * an upstream internal error is a bad gateway for our client, not our own 500.
 */
const UPSTREAM_TABLE: readonly UpstreamRow[] = [
  { from: 1000, to: 1004, status: 401, message: 'the video provider refused our credentials; do not retry' },
  { from: 1100, to: 1102, status: 429, message: "the video provider's account or resource package is unavailable; retry later only when instructed" },
  { from: 1103, to: 1103, status: 403, message: 'the video provider does not authorize this model or resource; do not retry unchanged' },
  { from: 1200, to: 1201, status: 400, message: 'the video provider refused a request parameter; correct the request' },
  { from: 1202, to: 1203, status: 404, message: 'the video provider does not know the method, resource or model; check the model' },
  { from: 1300, to: 1301, status: 400, message: "the video provider's policy or content-safety rules refused the input; change the input" },
  { from: 1302, to: 1304, status: 429, message: 'the video provider is rate or concurrency limited; retry with backoff' },
  { from: 5000, to: 5000, status: 502, message: 'the video provider failed internally; retry with exponential backoff' },
  { from: 5001, to: 5001, status: 503, message: 'the video provider is temporarily unavailable; retry with exponential backoff' },
  { from: 5002, to: 5002, status: 504, message: 'the video provider timed out; retry with exponential backoff' },
];

/** HTTP status and fixed message for an upstream refusal; codes outside the table (or none) are a 502, an unreachable upstream a 503. */
export function upstreamRefusal(upstreamCode: number | null, httpStatus: number): AlternateError {
  const row = upstreamCode === null ? undefined : UPSTREAM_TABLE.find((r) => upstreamCode >= r.from && upstreamCode <= r.to);
  if (row) return new AlternateError(row.status, AlternateErrorCode.RequestFailed, row.message, upstreamCode!);
  if (upstreamCode === null && httpStatus === 503) {
    return new AlternateError(503, AlternateErrorCode.RequestFailed, 'the video provider could not be reached; retry with exponential backoff');
  }
  const message =
    upstreamCode === null
      ? `the video provider answered HTTP ${httpStatus} without an error code; retry with exponential backoff`
      : `the video provider answered HTTP ${httpStatus} with a code outside the documented table; retry with exponential backoff`;
  return new AlternateError(502, AlternateErrorCode.RequestFailed, message, upstreamCode ?? undefined);
}
