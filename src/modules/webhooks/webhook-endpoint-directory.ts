import { Injectable } from '@nestjs/common';
import { WebhookEndpointDirectory } from '../audio/index.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';

/**
 * Audio's check on `webhookEndpointId`: the endpoint exists and belongs to the key. A disabled
 * endpoint passes (docs/webhooks.md › Endpoints): whether an event is recorded is decided when the
 * task ends, from the endpoint as it is then.
 */
@Injectable()
export class WebhookEndpointOwnership extends WebhookEndpointDirectory {
  constructor(private readonly endpoints: WebhookEndpointsService) {
    super();
  }

  async ownedBy(apiKeyId: string, endpointId: string): Promise<boolean> {
    if (typeof endpointId !== 'string') return false;
    return (await this.endpoints.findOwned(apiKeyId, endpointId)) !== null;
  }
}
