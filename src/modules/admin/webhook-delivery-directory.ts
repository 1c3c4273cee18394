import { Injectable } from '@nestjs/common';
import type { CursorPosition, Page } from '../../../libs/common/index.js';

/** One webhook delivery as the admin list shows it (across endpoints and keys). */
export interface AdminWebhookDeliverySummary {
  id: string;
  endpointId: string;
  apiKeyId: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AdminWebhookDeliveryFilter {
  status?: string;
  /** One endpoint's deliveries (`webhook:…`). */
  endpointId?: string;
  after?: CursorPosition;
  limit: number;
}

/** One attempt of a delivery as the admin list shows it. */
export interface AdminWebhookDeliveryAttempt {
  attempt: number;
  manual: boolean;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}

/** What a manual retry by an operator came to. */
export type AdminDeliveryRetryOutcome =
  | { outcome: 'retried'; delivery: AdminWebhookDeliverySummary }
  | { outcome: 'not_found' }
  | { outcome: 'not_retryable'; reason: string };

/** The webhooks domain's deliveries, newest first, one cursor page; and the manual retry of any one. */
export interface AdminWebhookDeliverySource {
  list(filter: AdminWebhookDeliveryFilter): Promise<Page<AdminWebhookDeliverySummary>>;
  retry(deliveryId: string): Promise<AdminDeliveryRetryOutcome>;
  /** The delivery's attempts, newest first, `limit + 1` of them below `beforeAttempt`; null when there is no such delivery. */
  attempts(deliveryId: string, limit: number, beforeAttempt?: number): Promise<AdminWebhookDeliveryAttempt[] | null>;
}

/**
 * The seam behind GET /admin/v1/webhook-deliveries: the webhooks domain registers its source in
 * onModuleInit (as task domains do with AdminTaskDirectory), so admin never imports webhooks.
 * Without a source the list is empty.
 */
@Injectable()
export class AdminWebhookDeliveryDirectory {
  private source: AdminWebhookDeliverySource | undefined;

  register(source: AdminWebhookDeliverySource): void {
    this.source = source;
  }

  list(filter: AdminWebhookDeliveryFilter): Promise<Page<AdminWebhookDeliverySummary>> {
    return this.source ? this.source.list(filter) : Promise.resolve({ items: [], hasMore: false, nextCursor: null });
  }

  retry(deliveryId: string): Promise<AdminDeliveryRetryOutcome> {
    return this.source ? this.source.retry(deliveryId) : Promise.resolve({ outcome: 'not_found' });
  }

  attempts(deliveryId: string, limit: number, beforeAttempt?: number): Promise<AdminWebhookDeliveryAttempt[] | null> {
    return this.source ? this.source.attempts(deliveryId, limit, beforeAttempt) : Promise.resolve(null);
  }
}
