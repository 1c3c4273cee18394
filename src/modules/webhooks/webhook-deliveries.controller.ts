import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Page } from '../../../libs/common/index.js';
import { ApiErrors, ApiKeyUnauthorized } from '../../app/openapi-errors.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { ListWebhookDeliveriesQueryDto, WebhookDeliveryPageDto, WebhookDeliveryResponseDto } from './dto/list-webhook-deliveries.dto.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WebhookDeliveryErrorCode } from './webhook-delivery-errors.js';
import { WebhookErrorCode } from './webhook-errors.js';
import type { WebhookDeliveryResource } from './webhook-delivery.types.js';

@ApiTags('webhooks')
@ApiKeyRoute()
@ApiKeyUnauthorized('webhook')
@ApiErrors(404, [[WebhookErrorCode.NotFound, 'no such endpoint or delivery for this key']])
@Controller('api/svc/v1/webhook-endpoints/:id/deliveries')
export class WebhookDeliveriesController {
  constructor(private readonly deliveries: WebhookDeliveriesService) {}

  @Get()
  @ApiOperation({ summary: "The endpoint's deliveries, newest first" })
  @ApiOkResponse({ type: WebhookDeliveryPageDto })
  @ApiErrors(400, [
    ['webhook.invalid_field', '`limit` not 1–100, a malformed `after` cursor'],
    ['webhook.unknown_field', 'another query parameter'],
  ])
  list(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string, @Query() query: ListWebhookDeliveriesQueryDto): Promise<Page<WebhookDeliveryResource>> {
    return this.deliveries.list(key, id, query);
  }

  @Post(':deliveryId/retry')
  @HttpCode(200)
  @ApiOperation({ summary: 'One new attempt now for an eligible failed delivery (same event id, fresh signature time)' })
  @ApiOkResponse({ type: WebhookDeliveryResponseDto, description: 'The delivery, pending, its attempt queued' })
  @ApiErrors(409, [[WebhookDeliveryErrorCode.DeliveryNotRetryable, 'not failed, endpoint disabled, or event seven days old or more']])
  retry(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<WebhookDeliveryResource> {
    return this.deliveries.retry(key, id, deliveryId);
  }
}
