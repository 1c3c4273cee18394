import { Injectable } from '@nestjs/common';
import { isIdOf } from '../../../libs/common/index.js';
import type { TransactionHandle } from '../../database/transaction.js';
import { WebhookEndpointRepository } from './webhook-endpoint.repository.js';
import { WebhookSecrets } from './webhook-secrets.js';

/** The endpoint as a sender needs it, with its secret in clear. */
export interface DeliverableEndpoint {
  id: string;
  apiKeyId: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret: string;
}

/** The endpoint as the outbox needs it when an event happens. */
export interface EventEndpoint {
  id: string;
  apiKeyId: string;
  events: string[];
  enabled: boolean;
}

/** What an owner check answers. */
export interface OwnedEndpoint {
  id: string;
  enabled: boolean;
}

/**
 * The webhook endpoints as the rest of the webhooks domain (delivery, outbox, delivery routes)
 * and audio's endpoint check see them. Ids that are not `webhook:<uuid>` answer null without a query.
 */
@Injectable()
export class WebhookEndpointsService {
  constructor(
    private readonly endpoints: WebhookEndpointRepository,
    private readonly secrets: WebhookSecrets,
  ) {}

  /** For the delivery side: the endpoint as a sender needs it, with its secret in clear; null when missing. Read at each attempt, so a rotated secret signs at once. */
  async findForDelivery(endpointId: string): Promise<DeliverableEndpoint | null> {
    if (!isIdOf('webhook', endpointId)) return null;
    const row = await this.endpoints.find(endpointId);
    if (!row) return null;
    return { id: row.id, apiKeyId: row.apiKeyId, url: row.url, events: [...row.events], enabled: row.enabled, secret: this.secrets.open(row.secretSealed, row.id) };
  }

  /** For the outbox: read inside the terminal transaction (tx from AudioTaskEvents). */
  async findForEvent(endpointId: string, tx: TransactionHandle): Promise<EventEndpoint | null> {
    if (!isIdOf('webhook', endpointId)) return null;
    const row = await this.endpoints.findIn(tx, endpointId);
    return row ? { id: row.id, apiKeyId: row.apiKeyId, events: [...row.events], enabled: row.enabled } : null;
  }

  /** Owner check for nested routes (deliveries, retry): null when missing or another key's. */
  async findOwned(apiKeyId: string, endpointId: string): Promise<OwnedEndpoint | null> {
    if (!isIdOf('webhook', endpointId)) return null;
    const row = await this.endpoints.findOwned(apiKeyId, endpointId);
    return row ? { id: row.id, enabled: row.enabled } : null;
  }
}
