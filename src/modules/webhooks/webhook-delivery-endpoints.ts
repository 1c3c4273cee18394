import type { TransactionHandle } from '../../database/transaction.js';

/**
 * What deliveries need from the endpoints (WebhookEndpointsService's contract, docs/webhooks.md),
 * as an abstract class so the delivery side depends on the contract, not on the CRUD code.
 */
export abstract class WebhookDeliveryEndpoints {
  /** The endpoint as a sender needs it, with its secret in clear; null when missing. */
  abstract findForDelivery(endpointId: string): Promise<{ id: string; apiKeyId: string; url: string; events: string[]; enabled: boolean; secret: string } | null>;
  /** Read inside the terminal transaction (tx from AudioTaskEvents). */
  abstract findForEvent(endpointId: string, tx: TransactionHandle): Promise<{ id: string; apiKeyId: string; events: string[]; enabled: boolean } | null>;
  /** Owner check for nested routes: null when missing or another key's. */
  abstract findOwned(apiKeyId: string, endpointId: string): Promise<{ id: string; enabled: boolean } | null>;
}
