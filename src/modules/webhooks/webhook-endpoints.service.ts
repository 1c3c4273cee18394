import { Injectable, Logger } from '@nestjs/common';
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

/** Told, after the change committed, that an endpoint was disabled (DELETE or PATCH `enabled: false`). */
export type EndpointDisabledListener = (endpointId: string) => Promise<void>;

/**
 * The webhook endpoints as the rest of the webhooks domain (delivery, outbox, delivery routes)
 * and audio's endpoint check see them. Ids that are not `webhook:<uuid>` answer null without a query.
 */
@Injectable()
export class WebhookEndpointsService {
  private readonly logger = new Logger(WebhookEndpointsService.name);
  private readonly disabledListeners: EndpointDisabledListener[] = [];

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

  /**
   * For the delivery worker: the secret in clear from the sealed text it read with its claim,
   * opened once per rotation (WebhookSecrets.openCurrent), not once per attempt.
   */
  secretOf(endpointId: string, sealed: string): string {
    return this.secrets.openCurrent(sealed, endpointId);
  }

  /** For the outbox: read inside the terminal transaction (tx from AudioTaskEvents). */
  async findForEvent(endpointId: string, tx: TransactionHandle): Promise<EventEndpoint | null> {
    if (!isIdOf('webhook', endpointId)) return null;
    const row = await this.endpoints.findIn(tx, endpointId);
    return row ? { id: row.id, apiKeyId: row.apiKeyId, events: [...row.events], enabled: row.enabled } : null;
  }

  /** The delivery side registers here (onModuleInit) to stop an endpoint's pending deliveries when it is disabled. */
  onDisabled(listener: EndpointDisabledListener): void {
    this.disabledListeners.push(listener);
  }

  /**
   * Called by the endpoint routes once a disable committed, before they answer. A listener that
   * fails is logged, not thrown: the endpoint is disabled either way, and the delivery worker stops
   * each pending delivery when its attempt comes due anyway.
   */
  async endpointDisabled(endpointId: string): Promise<void> {
    for (const listener of this.disabledListeners) {
      await listener(endpointId).catch((err: Error) => this.logger.warn(`after disabling ${endpointId}: ${err.message} (pending deliveries stop when due instead)`));
    }
  }

  /** Owner check for nested routes (deliveries, retry): null when missing or another key's. */
  async findOwned(apiKeyId: string, endpointId: string): Promise<OwnedEndpoint | null> {
    if (!isIdOf('webhook', endpointId)) return null;
    const row = await this.endpoints.findOwned(apiKeyId, endpointId);
    return row ? { id: row.id, enabled: row.enabled } : null;
  }
}
