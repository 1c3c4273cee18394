/**
 * When a delivery is tried (DESIGN §6): about 0, 10 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h after
 * the event, then every 5 h while within 24 h of it. Offsets count from the event, not from the
 * last attempt, so a slow attempt does not push the whole schedule back.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_OFFSETS_MS: readonly number[] = [0, 10 * SECOND, MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 15 * HOUR, 20 * HOUR];

/** Automatic attempts end once this much time has passed since the event (spec › Events). */
export const RETRY_WINDOW_MS = 24 * HOUR;

/** A failed delivery may be retried by hand while its event is younger than this (DESIGN §10). */
export const MANUAL_RETRY_WINDOW_MS = 7 * 24 * HOUR;

/**
 * The time of the next automatic attempt after `attemptsMade` attempts failed in a retryable way,
 * or null when the window is over. A receiver's `Retry-After` (429) is honoured as a lower bound:
 * never earlier than it asked, never earlier than the schedule.
 */
export function nextAttemptAt(eventAt: Date, attemptsMade: number, now: Date, retryAfterMs?: number): Date | null {
  const offset = RETRY_OFFSETS_MS[attemptsMade];
  if (offset === undefined) return null;
  const at = Math.max(eventAt.getTime() + offset, now.getTime(), now.getTime() + (retryAfterMs ?? 0));
  return at < eventAt.getTime() + RETRY_WINDOW_MS ? new Date(at) : null;
}

/** A `Retry-After` header (seconds or an HTTP date) in milliseconds from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed) * SECOND;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}
