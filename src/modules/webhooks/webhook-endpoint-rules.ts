import { addressRefusal, DEFAULT_ALLOWED_PORTS, OutboundRequestError, parseOutboundUrl } from '../../../libs/common/index.js';
import { WebhookErrorCode, webhookRefusal } from './webhook-errors.js';
import { isWebhookEventType, type WebhookEventType } from './webhook-events.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** What the outbound configuration allows (OUTBOUND_ALLOW_HTTP, OUTBOUND_ALLOW_PRIVATE). */
export interface UrlPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/**
 * Checks a receiver URL with the guarded outbound client's own rules (libs/common address policy),
 * so an endpoint that the delivery client would refuse outright is refused at registration. Host
 * names are resolved at each delivery, not here (a name's addresses can change). Returns the
 * normalized URL (WHATWG `href`), which is what is stored and delivered to.
 */
export function checkWebhookUrl(raw: string, policy: UrlPolicy): string {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw webhookRefusal(WebhookErrorCode.InvalidUrl, `url: at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let target;
  try {
    target = parseOutboundUrl(raw, policy.allowHttp);
  } catch (error) {
    if (!(error instanceof OutboundRequestError)) throw error;
    const code = error.reason === 'scheme_not_allowed' ? WebhookErrorCode.UrlSchemeNotAllowed : WebhookErrorCode.InvalidUrl;
    throw webhookRefusal(code, `url: ${error.message}`);
  }
  // Port 0 cannot be connected to, whatever the outbound policy.
  if (target.port === 0) throw webhookRefusal(WebhookErrorCode.InvalidUrl, 'url: port 0 is not a port a receiver can listen on');
  const href = target.url.href;
  if (href.length > MAX_WEBHOOK_URL_LENGTH) throw webhookRefusal(WebhookErrorCode.InvalidUrl, `url: at most ${MAX_WEBHOOK_URL_LENGTH} characters once normalized`);
  if (!policy.allowPrivate) {
    const why = target.literal !== undefined ? addressRefusal(target.literal, false) : isLocalhostName(target.hostname) ? `${target.hostname} is a loopback name` : null;
    if (why) throw webhookRefusal(WebhookErrorCode.UrlAddressNotAllowed, `url: ${why}; receivers must be public addresses`);
    if (!DEFAULT_ALLOWED_PORTS.includes(target.port)) {
      throw webhookRefusal(WebhookErrorCode.UrlPortNotAllowed, `url: port ${target.port} is not allowed; use ${DEFAULT_ALLOWED_PORTS.join(' or ')}`);
    }
  }
  return href;
}

/** RFC 6761: `localhost` and its subdomains always mean loopback. */
const isLocalhostName = (hostname: string): boolean => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
};

/** A non-empty, duplicate-free list of known event types, in the client's order. */
export function checkWebhookEvents(events: readonly unknown[]): WebhookEventType[] {
  if (events.length === 0) throw webhookRefusal(WebhookErrorCode.EventsEmpty, 'events: name at least one event type');
  const seen = new Set<WebhookEventType>();
  for (const [index, event] of events.entries()) {
    if (!isWebhookEventType(event)) {
      throw webhookRefusal(WebhookErrorCode.UnknownEvent, `events.${index}: ${JSON.stringify(String(event).slice(0, 80))} is not an event type; use audio.generation.succeeded or audio.generation.failed`);
    }
    if (seen.has(event)) throw webhookRefusal(WebhookErrorCode.DuplicateEvent, `events.${index}: ${event} is listed twice`);
    seen.add(event);
  }
  return [...seen];
}
