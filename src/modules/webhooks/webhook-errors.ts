import { DomainError, notFound } from '../../../libs/common/index.js';

/** Codes of the webhook routes beyond the shared ones (`webhook.not_found`, `webhook.invalid_field`, …). */
export enum WebhookDeliveryErrorCode {
  /** The delivery is not failed, its endpoint is disabled, or its event is seven days old or more. */
  DeliveryNotRetryable = 'webhook.delivery_not_retryable',
}

export const deliveryNotRetryable = (why: string): DomainError => new DomainError(409, WebhookDeliveryErrorCode.DeliveryNotRetryable, why);

export const deliveryNotFound = (): DomainError => notFound('webhook delivery');

export const endpointNotFound = (): DomainError => notFound('webhook endpoint');
