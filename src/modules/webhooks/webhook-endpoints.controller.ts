import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { CreateWebhookEndpointDto } from './dto/create-webhook-endpoint.dto.js';
import { UpdateWebhookEndpointDto } from './dto/update-webhook-endpoint.dto.js';
import { WebhookEndpointListDto, WebhookEndpointResponseDto, WebhookEndpointSecretDto } from './webhook-endpoint.resource.js';
import { WebhookEndpointCommands } from './webhook-endpoint-commands.js';
import { WEBHOOK_UNAUTHORIZED } from './webhook-errors.js';

const REFUSALS =
  '`webhook.invalid_url`, `webhook.url_scheme_not_allowed`, `webhook.url_address_not_allowed`, `webhook.url_port_not_allowed`, ' +
  '`webhook.events_empty`, `webhook.unknown_event`, `webhook.duplicate_event`, `webhook.invalid_field`, `webhook.unknown_field`';

@ApiTags('webhooks')
@ApiKeyRoute()
@ApiUnauthorizedResponse({ type: ErrorEnvelopeDto, description: WEBHOOK_UNAUTHORIZED })
@Controller('api/svc/v1/webhook-endpoints')
export class WebhookEndpointsController {
  constructor(private readonly endpoints: WebhookEndpointCommands) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Register a receiver; the signing secret is shown only in this answer' })
  @ApiCreatedResponse({ type: WebhookEndpointSecretDto })
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: REFUSALS })
  @ApiConflictResponse({ type: ErrorEnvelopeDto, description: '`webhook.endpoint_limit`' })
  create(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateWebhookEndpointDto): Promise<WebhookEndpointSecretDto> {
    return this.endpoints.create(key, dto);
  }

  @Get()
  @ApiOperation({ summary: "The calling key's endpoints, newest first, disabled ones included; never a secret" })
  @ApiOkResponse({ type: WebhookEndpointListDto })
  list(@CurrentKey() key: AuthenticatedKey): Promise<WebhookEndpointListDto> {
    return this.endpoints.list(key);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change any of url, events, enabled' })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: REFUSALS })
  @ApiNotFoundResponse({ type: ErrorEnvelopeDto, description: '`webhook.not_found`' })
  update(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string, @Body() dto: UpdateWebhookEndpointDto): Promise<WebhookEndpointResponseDto> {
    return this.endpoints.update(key, id, dto);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Disable the endpoint (kept and still listed, `enabled: false`); deliveries stop' })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  @ApiNotFoundResponse({ type: ErrorEnvelopeDto, description: '`webhook.not_found`' })
  disable(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<WebhookEndpointResponseDto> {
    return this.endpoints.disable(key, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'Replace the signing secret; the old one stops signing at once; the new one is shown only here' })
  @ApiOkResponse({ type: WebhookEndpointSecretDto })
  @ApiNotFoundResponse({ type: ErrorEnvelopeDto, description: '`webhook.not_found`' })
  rotateSecret(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<WebhookEndpointSecretDto> {
    return this.endpoints.rotateSecret(key, id);
  }
}
