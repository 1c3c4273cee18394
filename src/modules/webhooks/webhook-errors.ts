import { DomainError } from '../../../libs/common/index.js';

/**
 * Every code the webhook-endpoint routes raise themselves. Shared code adds `webhook.unauthorized`
 * (401), `webhook.invalid_field` (a field of the wrong type, an empty PATCH), `webhook.unknown_field`
 * through the route prefix (ErrorDomainsModule).
 */
export enum WebhookErrorCode {
  /** Not an absolute http(s) URL, longer than 2,048 characters, or carrying user info. */
  InvalidUrl = 'webhook.invalid_url',
  /** http:// while OUTBOUND_ALLOW_HTTP is off, or a scheme other than http(s). */
  UrlSchemeNotAllowed = 'webhook.url_scheme_not_allowed',
  /** A host that is a loopback, private, link-local … address literal (or `localhost`) while OUTBOUND_ALLOW_PRIVATE is off. */
  UrlAddressNotAllowed = 'webhook.url_address_not_allowed',
  /** A port other than 80 and 443 while OUTBOUND_ALLOW_PRIVATE is off (the delivery client would refuse it). */
  UrlPortNotAllowed = 'webhook.url_port_not_allowed',
  /** `events` is empty. */
  EventsEmpty = 'webhook.events_empty',
  /** `events` names a type that does not exist. */
  UnknownEvent = 'webhook.unknown_event',
  /** `events` names a type twice. */
  DuplicateEvent = 'webhook.duplicate_event',
  /** The key already has WEBHOOK_MAX_ENDPOINTS_PER_KEY endpoints (enabled or disabled). */
  EndpointLimit = 'webhook.endpoint_limit',
  /** No endpoint of this key by that id (another key's counts as none). */
  NotFound = 'webhook.not_found',
}

export const webhookRefusal = (code: WebhookErrorCode, message: string): DomainError => new DomainError(400, code, message);

export const endpointNotFound = (): DomainError => new DomainError(404, WebhookErrorCode.NotFound, 'webhook endpoint not found');
