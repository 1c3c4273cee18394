import { ApiProperty } from '@nestjs/swagger';
import type { WebhookEndpointEntity } from './webhook-endpoint.entity.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-events.js';

/** An endpoint as clients see it (spec › Webhook endpoint); never its secret. */
export class WebhookEndpointResponseDto {
  @ApiProperty({ example: 'webhook:5b0c3d0e-8a57-4d1f-9a8e-0f1f2a3b4c5d' })
  id!: string;

  @ApiProperty()
  url!: string;

  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, isArray: true })
  events!: string[];

  @ApiProperty()
  enabled!: boolean;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class WebhookEndpointListDto {
  @ApiProperty({ type: [WebhookEndpointResponseDto] })
  items!: WebhookEndpointResponseDto[];
}

/** Creation and rotation: the only answers that carry the secret. */
export class WebhookEndpointSecretDto {
  @ApiProperty()
  id!: string;

  @ApiProperty({ description: '`whsec_` + 32 random bytes in base64url; shown once', example: 'whsec_…' })
  secret!: string;
}

export const toWebhookEndpointResource = (row: WebhookEndpointEntity): WebhookEndpointResponseDto => ({
  id: row.id,
  url: row.url,
  events: [...row.events],
  enabled: row.enabled,
  createdAt: row.createdAt.toISOString(),
});
