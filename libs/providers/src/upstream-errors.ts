/** The undici/Node error code of a failed upstream call (`ECONNRESET`, `UND_ERR_HEADERS_TIMEOUT`, …), on the error or its cause; '' when none. */
export function errorCode(error: unknown): string {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.cause?.code === 'string') return e.cause.code;
  return '';
}

/** An upstream body parsed as JSON, or null when it is not JSON (an HTML error page, a proxy's text). */
export function parseJson<T>(text: string): T | null {
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}
