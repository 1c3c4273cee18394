/**
 * ElevenLabs answers and transport failures → what the runner needs to decide (upstreams.md
 * §2.1, §2.8). Reasons are fixed sentences: the upstream's own message may echo our key, quota
 * or account details, so it never reaches a client; only field names of a 422 are passed on.
 */
import type { ElevenLabsErrorBody, ElevenLabsErrorDetail, ElevenLabsValidationItem } from './elevenlabs-types.js';
import { errorCode } from '../upstream-errors.js';

export interface UpstreamRefusal {
  reason: string;
  /** Sending the same request again is safe and may succeed. */
  retryable: boolean;
  retryAfterMs?: number;
  /** Counts against the circuit breaker: the upstream is unusable for everyone, not for this request. */
  unhealthy: boolean;
}

/** Longest Retry-After honoured; a bigger value is a misconfiguration, not a plan. */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Credential problems of the gateway's own account (an operator must act). */
const CREDENTIAL_STATUSES = new Set(['invalid_api_key', 'missing_permissions', 'detected_unusual_activity', 'unauthorized']);

export function parseErrorBody(text: string): ElevenLabsErrorBody | null {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as ElevenLabsErrorBody) : null;
  } catch {
    return null;
  }
}

/** `detail.status`, else the newer `detail.code`; empty for list-shaped or missing details. */
export function detailStatus(body: ElevenLabsErrorBody | null): string {
  const detail = body?.detail;
  if (!detail || typeof detail !== 'object' || Array.isArray(detail)) return '';
  const { status, code } = detail as ElevenLabsErrorDetail;
  return typeof status === 'string' ? status : typeof code === 'string' ? code : '';
}

/** Field paths of a 422 (`body.text`), sanitised and capped: names only, never values. */
function invalidFields(body: ElevenLabsErrorBody | null): string[] {
  const detail = body?.detail;
  if (!Array.isArray(detail)) return [];
  const fields = (detail as ElevenLabsValidationItem[])
    .map((item) => (Array.isArray(item?.loc) ? item.loc.map(String).join('.') : ''))
    .map((field) => field.replace(/[^A-Za-z0-9_.]/g, '').slice(0, 64))
    .filter(Boolean);
  return [...new Set(fields)].slice(0, 3);
}

/** `Retry-After` in seconds or as an HTTP date, capped; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  return Math.min(Math.ceil(ms), MAX_RETRY_AFTER_MS);
}

/** An answered error status → a clean refusal (upstreams.md §2.8). */
export function classifyRefusal(status: number, bodyText: string, retryAfter: string | string[] | undefined, defaultRetryMs: number): UpstreamRefusal {
  const body = parseErrorBody(bodyText);
  const code = detailStatus(body);
  const wait = retryAfterMs(retryAfter) ?? defaultRetryMs;
  if (code === 'voice_not_found') return { reason: 'voice not found upstream', retryable: false, unhealthy: false };
  if (code === 'max_character_limit_exceeded') {
    return { reason: "the text is longer than the speech upstream's model accepts", retryable: false, unhealthy: false };
  }
  if (code === 'quota_exceeded') {
    return { reason: "the speech upstream refused the gateway's account: its quota is exhausted (an operator must act)", retryable: false, unhealthy: true };
  }
  if (status === 401 || CREDENTIAL_STATUSES.has(code)) {
    return { reason: "the speech upstream refused the gateway's credentials (an operator must act)", retryable: false, unhealthy: true };
  }
  if (status === 403) return { reason: "the speech upstream's plan does not allow this request", retryable: false, unhealthy: false };
  if (status === 422) {
    const fields = invalidFields(body);
    const which = fields.length > 0 ? ` (${fields.join(', ')})` : '';
    return { reason: `the speech upstream refused the request as invalid${which}`, retryable: false, unhealthy: false };
  }
  if (status === 429) {
    if (code === 'too_many_concurrent_requests') return { reason: 'the speech upstream is at its concurrency limit', retryable: true, retryAfterMs: wait, unhealthy: false };
    if (code === 'system_busy') return { reason: 'the speech upstream is overloaded', retryable: true, retryAfterMs: wait, unhealthy: true };
    return { reason: 'the speech upstream is rate limited', retryable: true, retryAfterMs: wait, unhealthy: false };
  }
  if (status >= 500) return { reason: `the speech upstream failed (HTTP ${status})`, retryable: true, retryAfterMs: wait, unhealthy: true };
  if (status === 400) return { reason: 'the speech upstream refused the request as invalid', retryable: false, unhealthy: false };
  if (status === 404) return { reason: 'the speech upstream does not know the requested resource', retryable: false, unhealthy: false };
  return { reason: `the speech upstream answered HTTP ${status}`, retryable: false, unhealthy: false };
}

/** undici/Node error codes raised before any byte of the request could have left this process. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * A transport failure: `sent` false when the request never left (connection refused, DNS,
 * connect timeout — safe to resend); true when it may have reached the upstream (reset,
 * headers or body timeout — the answer is lost, never resend).
 */
export function classifyTransportError(error: unknown): { sent: boolean; code: string } {
  const code = errorCode(error) || 'network error';
  return { sent: !NOT_SENT.has(code), code };
}
