import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock, DEFAULT_PAGE_LIMIT, decodeCursor, isIdOf, type Page, toPage } from '../../../libs/common/index.js';
import type { AdminDeliveryRetryOutcome } from '../admin/index.js';
import type { AuthenticatedKey } from '../identity/index.js';
import type { ListWebhookDeliveriesQueryDto } from './dto/list-webhook-deliveries.dto.js';
import { MANUAL_RETRY_WINDOW_MS } from './retry-schedule.js';
import { deliveryNotFound, deliveryNotRetryable, endpointNotFound } from './webhook-delivery-errors.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import { WebhookDeliveryJobs } from './webhook-delivery-jobs.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import { DISABLED_REASON } from './webhook-delivery.runner.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { toDeliveryResource, type WebhookDeliveryResource, type WebhookDeliveryRow } from './webhook-delivery.types.js';

/** The delivery log and the manual retry of one endpoint, for its owner only (another key's → 404). */
@Injectable()
export class WebhookDeliveriesService implements OnModuleInit {
  constructor(
    private readonly endpoints: WebhookEndpointsService,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly jobs: WebhookDeliveryJobs,
    private readonly metrics: WebhookMetrics,
    private readonly clock: Clock,
  ) {}

  /**
   * Disabling an endpoint stops its pending deliveries at once (`failed`, `endpoint_disabled`), so
   * its log never shows an attempt "due" that will not be made; their jobs then find them ended.
   */
  onModuleInit(): void {
    this.endpoints.onDisabled(async (endpointId) => {
      const ended = await this.deliveries.failPendingOfEndpoint(endpointId, DISABLED_REASON, this.clock.now());
      if (ended > 0) this.metrics.outcomes.inc({ outcome: 'failed' }, ended);
    });
  }

  async list(key: AuthenticatedKey, endpointId: string, query: ListWebhookDeliveriesQueryDto): Promise<Page<WebhookDeliveryResource>> {
    await this.ownedEndpoint(key, endpointId);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.deliveries.list({ limit, after: decodeCursor(query.after) }, endpointId);
    return toPage(rows, limit, toDeliveryResource);
  }

  /**
   * One new attempt now for a failed delivery whose endpoint is enabled and whose event is under
   * seven days old; the same event id and payload, a fresh `t`. Only that attempt: a manual retry
   * that fails ends `failed` again (no automatic schedule restarts).
   */
  async retry(key: AuthenticatedKey, endpointId: string, deliveryId: string): Promise<WebhookDeliveryResource> {
    const endpoint = await this.ownedEndpoint(key, endpointId);
    const delivery = isIdOf('delivery', deliveryId) ? await this.deliveries.findOnEndpoint(endpoint.id, deliveryId) : null;
    if (!delivery) throw deliveryNotFound();
    const outcome = await this.reopen(delivery, endpoint);
    if (outcome.outcome === 'not_retryable') throw deliveryNotRetryable(outcome.reason);
    return toDeliveryResource(outcome.delivery);
  }

  /**
   * The same retry by an operator (POST /admin/v1/webhook-deliveries/{id}/retry): any delivery,
   * whoever owns its endpoint; the same rules.
   */
  async retryByOperator(deliveryId: string): Promise<AdminDeliveryRetryOutcome> {
    const delivery = isIdOf('delivery', deliveryId) ? await this.deliveries.findById(deliveryId) : null;
    const endpoint = delivery ? await this.endpoints.findForDelivery(delivery.endpointId) : null;
    if (!delivery || !endpoint) return { outcome: 'not_found' };
    const outcome = await this.reopen(delivery, endpoint);
    if (outcome.outcome === 'not_retryable') return outcome;
    return { outcome: 'retried', delivery: { ...toDeliveryResource(outcome.delivery), endpointId: outcome.delivery.endpointId, apiKeyId: outcome.delivery.apiKeyId } };
  }

  private async reopen(
    delivery: WebhookDeliveryRow,
    endpoint: { enabled: boolean },
  ): Promise<{ outcome: 'retried'; delivery: WebhookDeliveryRow } | { outcome: 'not_retryable'; reason: string }> {
    const now = this.clock.now();
    const refuse = (reason: string) => ({ outcome: 'not_retryable' as const, reason });
    if (delivery.status !== 'failed') return refuse(`only a failed delivery can be retried; this one is ${delivery.status}`);
    if (!endpoint.enabled) return refuse('the endpoint is disabled; enable it first');
    if (now.getTime() - delivery.eventCreatedAt.getTime() >= MANUAL_RETRY_WINDOW_MS) return refuse('the event is seven days old or more');
    const reopened = await this.deliveries.reopenByHand(delivery.id, now);
    if (!reopened) return refuse('the delivery changed meanwhile; read it again');
    await this.jobs.enqueue(reopened.id, reopened.endpointId);
    return { outcome: 'retried', delivery: reopened };
  }

  private async ownedEndpoint(key: AuthenticatedKey, endpointId: string): Promise<{ id: string; enabled: boolean }> {
    const endpoint = isIdOf('webhook', endpointId) ? await this.endpoints.findOwned(key.id, endpointId) : null;
    if (!endpoint) throw endpointNotFound();
    return endpoint;
  }
}
