import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiKeyUnauthorized, type ErrorCase } from '../../app/openapi-errors.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { CreateWebhookEndpointDto } from './dto/create-webhook-endpoint.dto.js';
import { UpdateWebhookEndpointDto } from './dto/update-webhook-endpoint.dto.js';
import { WebhookEndpointListDto, WebhookEndpointResponseDto, WebhookEndpointSecretDto } from './webhook-endpoint.resource.js';
import { WebhookEndpointCommands } from './webhook-endpoint-commands.js';
import { WebhookErrorCode as Code } from './webhook-errors.js';

const REFUSALS: readonly ErrorCase[] = [
  Code.InvalidUrl,
  Code.UrlSchemeNotAllowed,
  Code.UrlAddressNotAllowed,
  Code.UrlPortNotAllowed,
  Code.EventsEmpty,
  Code.UnknownEvent,
  Code.DuplicateEvent,
  'webhook.invalid_field',
  'webhook.unknown_field',
];
const NotFound = () => ApiErrors(404, [Code.NotFound]);

@ApiTags('webhooks')
@ApiKeyRoute()
@ApiKeyUnauthorized('webhook')
@Controller('api/svc/v1/webhook-endpoints')
export class WebhookEndpointsController {
  constructor(private readonly endpoints: WebhookEndpointCommands) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Register a receiver; the signing secret is shown only in this answer' })
  @ApiCreatedResponse({ type: WebhookEndpointSecretDto })
  @ApiErrors(400, REFUSALS)
  @ApiErrors(409, [[Code.EndpointLimit, 'the key holds WEBHOOK_MAX_ENDPOINTS_PER_KEY endpoints']])
  create(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateWebhookEndpointDto): Promise<WebhookEndpointSecretDto> {
    return this.endpoints.create(key, dto);
  }

  @Get()
  @ApiOperation({ summary: "The calling key's endpoints, newest first, disabled ones included; never a secret" })
  @ApiOkResponse({ type: WebhookEndpointListDto })
  list(@CurrentKey() key: AuthenticatedKey): Promise<WebhookEndpointListDto> {
    return this.endpoints.list(key);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One endpoint of the calling key, as listed; never a secret' })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  @NotFound()
  get(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<WebhookEndpointResponseDto> {
    return this.endpoints.get(key, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change any of url, events, enabled' })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  @ApiErrors(400, REFUSALS)
  @NotFound()
  update(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string, @Body() dto: UpdateWebhookEndpointDto): Promise<WebhookEndpointResponseDto> {
    return this.endpoints.update(key, id, dto);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Disable the endpoint (kept and still listed, `enabled: false`); deliveries stop' })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  @NotFound()
  disable(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<WebhookEndpointResponseDto> {
    return this.endpoints.disable(key, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'Replace the signing secret; the old one stops signing at once; the new one is shown only here' })
  @ApiOkResponse({ type: WebhookEndpointSecretDto })
  @NotFound()
  rotateSecret(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<WebhookEndpointSecretDto> {
    return this.endpoints.rotateSecret(key, id);
  }
}
