import { Injectable } from '@nestjs/common';

/**
 * Answers whether a webhook endpoint exists and belongs to an API key (spec › Authentication 2:
 * an endpoint and the task that references it belong to the same key). Audio asks it before any
 * hold; the webhooks domain provides the real lookup under WEBHOOK_ENDPOINT_DIRECTORY_OVERRIDE
 * (from a `@Global()` module, like PRICE_CATALOGUE_OVERRIDE), so audio never imports it.
 */
export abstract class WebhookEndpointDirectory {
  abstract ownedBy(apiKeyId: string, endpointId: string): Promise<boolean>;
}

/** Provide this token (from a @Global() module) to give audio the webhook endpoints. */
export const WEBHOOK_ENDPOINT_DIRECTORY_OVERRIDE = Symbol('WEBHOOK_ENDPOINT_DIRECTORY_OVERRIDE');

/** Until the webhooks domain exists no endpoint exists, so every `webhookEndpointId` is refused. */
@Injectable()
export class NoWebhookEndpoints extends WebhookEndpointDirectory {
  ownedBy(): Promise<boolean> {
    return Promise.resolve(false);
  }
}
