// Webhooks' public surface: what other modules may import (docs/architecture.md › Module boundaries).
export { WebhooksModule } from './webhooks.module.js';
export { WebhookEndpointsModule } from './webhook-endpoints.module.js';
export { type DeliverableEndpoint, type EventEndpoint, type OwnedEndpoint, WebhookEndpointsService } from './webhook-endpoints.service.js';
export { WEBHOOK_EVENT_TYPES, type WebhookEventType, isWebhookEventType } from './webhook-events.js';
