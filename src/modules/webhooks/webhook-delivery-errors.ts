import { DomainError, notFound } from '../../../libs/common/index.js';
export { endpointNotFound } from './webhook-errors.js';

/** Codes of the delivery routes beyond the endpoints' (webhook-errors.ts) and the shared ones. */
export enum WebhookDeliveryErrorCode {
  /** The delivery is not failed, its endpoint is disabled, or its event is seven days old or more. */
  DeliveryNotRetryable = 'webhook.delivery_not_retryable',
}

export const deliveryNotRetryable = (why: string): DomainError => new DomainError(409, WebhookDeliveryErrorCode.DeliveryNotRetryable, why);

export const deliveryNotFound = (): DomainError => notFound('webhook delivery');
