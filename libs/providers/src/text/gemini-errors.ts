/**
 * The Google RPC error envelope of the Gemini API (UPSTREAM §1.9), shared by the adapters that
 * call it: the envelope parsed leniently, and the retry delay from `Retry-After` or `RetryInfo`.
 */
export interface GoogleErrorBody {
  error?: { code?: number; message?: string; status?: string; details?: Array<Record<string, unknown>> };
}

/** The envelope of an error answer, or `{}` when the body is not JSON. */
export function parseGoogleError(text: string): GoogleErrorBody {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as GoogleErrorBody) : {};
  } catch {
    return {};
  }
}

/** Seconds to wait: the `Retry-After` header, else the `RetryInfo.retryDelay` detail ("34s"). */
export function retryAfterSeconds(body: GoogleErrorBody, header: string | string[] | undefined): number | undefined {
  const fromHeader = Number(Array.isArray(header) ? header[0] : header);
  if (Number.isFinite(fromHeader) && fromHeader > 0) return fromHeader;
  for (const detail of body.error?.details ?? []) {
    const delay = detail.retryDelay;
    if (typeof delay === 'string') {
      const seconds = Number(delay.replace(/s$/, ''));
      if (Number.isFinite(seconds)) return Math.ceil(seconds);
    }
  }
  return undefined;
}
