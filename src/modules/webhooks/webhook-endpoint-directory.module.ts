import { Global, Module } from '@nestjs/common';
import { WEBHOOK_ENDPOINT_DIRECTORY_OVERRIDE } from '../audio/index.js';
import { WebhookEndpointOwnership } from './webhook-endpoint-directory.js';
import { WebhookEndpointsModule } from './webhook-endpoints.module.js';

/**
 * Gives audio the real endpoint check. Global only because AudioModule must see the token without
 * importing webhooks (docs/extending.md › Override prices uses the same seam); it provides nothing else.
 */
@Global()
@Module({
  imports: [WebhookEndpointsModule],
  providers: [WebhookEndpointOwnership, { provide: WEBHOOK_ENDPOINT_DIRECTORY_OVERRIDE, useExisting: WebhookEndpointOwnership }],
  exports: [WEBHOOK_ENDPOINT_DIRECTORY_OVERRIDE],
})
export class WebhookEndpointDirectoryModule {}
