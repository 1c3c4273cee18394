import { Module } from '@nestjs/common';
import { ErrorDomainsModule } from '../../app/error-domains.module.js';
import { WebhookDeliveriesModule } from './webhook-deliveries.module.js';
import { WebhookEndpointDirectoryModule } from './webhook-endpoint-directory.module.js';
import { WebhookEndpointsModule } from './webhook-endpoints.module.js';

/**
 * The webhooks domain: endpoints (WebhookEndpointsModule) and audio's endpoint check; deliveries
 * plug in as a module of their own imported here. Errors on its routes carry `webhook.`.
 */
@Module({
  imports: [
    ErrorDomainsModule.forFeature({ domain: 'webhook', pathPrefixes: ['/api/svc/v1/webhook-endpoints'] }),
    WebhookEndpointsModule,
    WebhookEndpointDirectoryModule,
    WebhookDeliveriesModule,
  ],
  exports: [WebhookEndpointsModule],
})
export class WebhooksModule {}
