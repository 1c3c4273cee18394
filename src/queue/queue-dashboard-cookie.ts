import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { AppConfig } from '../config/app-config.js';

/** Where bull-board answers: its page, its static files and its JSON API (`/admin/queues/api/…`). */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';
export const QUEUE_DASHBOARD_COOKIE = 'svc_admin_queues';
/** How long a dashboard cookie lets the browser in; the console asks for a new one on each opening. */
export const QUEUE_DASHBOARD_COOKIE_TTL_MS = 60 * 60_000;

/**
 * The dashboard's session cookie (docs/admin-api.md › Queue dashboard). A browser cannot send
 * `Authorization: Bearer` on a plain navigation, so the console trades the admin token for a
 * short-lived cookie (POST /admin/v1/queue-dashboard/session): `v1.<expiry ms>.<HMAC>`, keyed by
 * a hash of ADMIN_TOKEN (rotating the token ends every cookie), HttpOnly (no script reads it),
 * SameSite=Strict (no other site can make the browser send it, so bull-board's retry/clean
 * buttons cannot be triggered cross-site), Path=/admin/queues (sent nowhere else), Secure when
 * the service is served over HTTPS. It holds no secret: only an expiry and its MAC.
 */
export class QueueDashboardCookie {
  private readonly key: Buffer;

  constructor(private readonly config: AppConfig) {
    this.key = createHash('sha256').update(`queue-dashboard-cookie\0${config.env.ADMIN_TOKEN}`).digest();
  }

  /** A `Set-Cookie` value valid until `now + TTL`. */
  issue(now = Date.now()): { header: string; expiresAt: Date } {
    const expires = now + QUEUE_DASHBOARD_COOKIE_TTL_MS;
    const value = `v1.${expires}.${this.mac(expires)}`;
    const secure = this.config.publicBaseUrl.startsWith('https://') ? '; Secure' : '';
    const header = `${QUEUE_DASHBOARD_COOKIE}=${value}; Path=${QUEUE_DASHBOARD_PATH}; Max-Age=${QUEUE_DASHBOARD_COOKIE_TTL_MS / 1000}; HttpOnly; SameSite=Strict${secure}`;
    return { header, expiresAt: new Date(expires) };
  }

  /** True when the request's Cookie header carries an unexpired cookie we minted. */
  accepts(cookieHeader: string | undefined, now = Date.now()): boolean {
    for (const part of (cookieHeader ?? '').split(';')) {
      const [name, value] = part.trim().split('=', 2);
      if (name !== QUEUE_DASHBOARD_COOKIE || !value) continue;
      const match = /^v1\.(\d{13,15})\.([A-Za-z0-9_-]{43})$/.exec(value);
      if (!match) continue;
      const expires = Number(match[1]);
      const given = Buffer.from(match[2]!, 'base64url');
      const expected = Buffer.from(this.mac(expires), 'base64url');
      if (given.length === expected.length && timingSafeEqual(given, expected) && expires > now) return true;
    }
    return false;
  }

  private mac(expires: number): string {
    return createHmac('sha256', this.key).update(`v1.${expires}`).digest('base64url');
  }
}
