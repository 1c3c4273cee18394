import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock, isIdOf, toPage } from '../../../libs/common/index.js';
import { WorkReconciler } from '../../queue/work-reconciler.js';
import { AdminWebhookDeliveryDirectory } from '../admin/index.js';
import { deliveryJobId, WEBHOOK_DELIVER_JOB, WEBHOOK_JOB_OPTIONS, WEBHOOKS_QUEUE } from './webhook-jobs.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import { toDeliveryResource, type WebhookDeliveryStatus } from './webhook-delivery.types.js';

/** Pending deliveries due within this horizon are checked for a job; later ones when they come near. */
const RECONCILE_HORIZON_MS = 5 * 60_000;
/** Bounds one reconcile's work; the rest are picked up by the next run. */
const RECONCILE_BATCH = 1000;

/**
 * What webhooks registers with the platform: the reconciler source (pending deliveries due or near
 * whose job Redis lost are enqueued again under `delivery:<uuid>`) and the admin delivery list.
 */
@Injectable()
export class WebhookDeliverySources implements OnModuleInit {
  constructor(
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly reconciler: WorkReconciler,
    private readonly directory: AdminWebhookDeliveryDirectory,
    private readonly clock: Clock,
    private readonly service: WebhookDeliveriesService,
  ) {}

  onModuleInit(): void {
    this.reconciler.register({
      name: 'webhooks',
      findPending: async () =>
        (await this.deliveries.due(new Date(this.clock.now().getTime() + RECONCILE_HORIZON_MS), RECONCILE_BATCH)).map((delivery) => ({
          queue: WEBHOOKS_QUEUE,
          jobName: WEBHOOK_DELIVER_JOB,
          jobId: deliveryJobId(delivery.id),
          data: { deliveryId: delivery.id, endpointId: delivery.endpointId },
          options: WEBHOOK_JOB_OPTIONS,
        })),
    });

    this.directory.register({
      list: async (filter) => {
        const rows = await this.deliveries.list({ limit: filter.limit, after: filter.after, status: filter.status as WebhookDeliveryStatus | undefined }, filter.endpointId);
        return toPage(rows, filter.limit, (row) => ({ ...toDeliveryResource(row), endpointId: row.endpointId, apiKeyId: row.apiKeyId }));
      },
      retry: (deliveryId) => this.service.retryByOperator(deliveryId),
      attempts: async (deliveryId, limit, beforeAttempt) => {
        const delivery = isIdOf('delivery', deliveryId) ? await this.deliveries.findById(deliveryId) : null;
        return delivery ? this.deliveries.attempts(delivery.id, limit, beforeAttempt) : null;
      },
    });
  }
}
