/** The event types an endpoint may subscribe to (spec › Events › Audio completion webhooks). */
export const WEBHOOK_EVENT_TYPES = ['audio.generation.succeeded', 'audio.generation.failed'] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (value: unknown): value is WebhookEventType =>
  typeof value === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
