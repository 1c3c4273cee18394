import { Module } from '@nestjs/common';
import { GuardedHttpClient } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { QueueModule } from '../../queue/queue.module.js';
import { AdminModule } from '../admin/index.js';
import { AudioModule } from '../audio/index.js';
import { IdentityModule } from '../identity/identity.module.js';
import { EndpointGate } from './endpoint-gate.js';
import { WebhookDeliveriesController } from './webhook-deliveries.controller.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WebhookDeliveryJobs } from './webhook-delivery-jobs.js';
import { WebhookDeliverySources } from './webhook-delivery-sources.js';
import { WebhookDeliveryProcessor } from './webhook-delivery.processor.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import { WebhookDeliveryRunner } from './webhook-delivery.runner.js';
import { WebhookEndpointsModule } from './webhook-endpoints.module.js';
import { WEBHOOKS_QUEUE } from './webhook-jobs.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { WebhookOutbox } from './webhook-outbox.js';
import { WebhookSender } from './webhook-sender.js';

/**
 * Webhook events and deliveries: the outbox on audio's terminal transitions, the delivery worker
 * (signing, schedule, per-endpoint fairness), the delivery log and manual retry, the reconciler
 * source, the admin list and the metrics. Imported by WebhooksModule; reads the endpoints through
 * WebhookEndpointsService.
 */
@Module({
  imports: [QueueModule.forFeature({ queues: [WEBHOOKS_QUEUE] }), AudioModule, AdminModule, IdentityModule, WebhookEndpointsModule],
  controllers: [WebhookDeliveriesController],
  providers: [
    WebhookDeliveryRepository,
    WebhookDeliveryJobs,
    WebhookOutbox,
    WebhookSender,
    EndpointGate,
    WebhookMetrics,
    WebhookDeliveryRunner,
    WebhookDeliveryProcessor,
    WebhookDeliveriesService,
    WebhookDeliverySources,
    {
      // Its own pools: many receivers must not evict the media client's connections (or the reverse).
      provide: GuardedHttpClient,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new GuardedHttpClient({ allowHttp: config.env.OUTBOUND_ALLOW_HTTP, allowPrivate: config.env.OUTBOUND_ALLOW_PRIVATE, maxPools: 256 }),
    },
  ],
})
export class WebhookDeliveriesModule {}
