import { Body, Controller, Headers, HttpCode, Post, UseInterceptors } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey, Public } from '../identity/index.js';
import { ALTERNATE_CALLBACK_BODY_LIMIT } from './alternate.constants.js';
import { AlternateBodyBoundInterceptor } from './alternate-body-bound.interceptor.js';
import { AlternateCallbackHandler } from './alternate-callbacks.js';
import { AlternateTaskService } from './alternate-task.service.js';
import { AlternateErrorEnvelopeDto, AlternateTaskResponseDto } from './alternate-task.resource.js';
import { CreateAlternateTaskDto } from './dto/create-alternate-task.dto.js';

@ApiTags('alternate video')
@ApiKeyRoute()
@ApiExtraModels(AlternateTaskResponseDto, AlternateErrorEnvelopeDto)
@Controller('v1/alternate/video/tasks')
export class AlternateVideoController {
  constructor(private readonly alternateTasks: AlternateTaskService) {}

  @Post()
  @HttpCode(200)
  // Base64 images (up to 10 MiB each) make bodies as large as the text operations'.
  @RouteConfig({ bodyLimit: 'text' })
  @UseInterceptors(AlternateBodyBoundInterceptor)
  @ApiOperation({
    summary: 'Create an alternate-provider (Kling) video task; the upstream is asked synchronously. Poll it at GET /v1/contents/generations/tasks/{id}',
  })
  @ApiOkResponse({ type: AlternateTaskResponseDto })
  @ApiResponse({ status: 400, type: AlternateErrorEnvelopeDto, description: '`provider.invalid_field`, `provider.unknown_field`, `provider.invalid_image` (no `upstreamCode`); or the upstream refused: `provider.request_failed` with `upstreamCode` 1200–1201, 1300–1301' })
  @ApiResponse({ status: 401, type: AlternateErrorEnvelopeDto, description: '`provider.unauthorized` (our API key); `provider.request_failed` with `upstreamCode` 1000–1004 (our upstream credentials)' })
  @ApiResponse({ status: 402, type: AlternateErrorEnvelopeDto, description: '`provider.insufficient_balance`' })
  @ApiResponse({ status: 403, type: AlternateErrorEnvelopeDto, description: '`provider.request_failed`, `upstreamCode` 1103' })
  @ApiResponse({ status: 404, type: AlternateErrorEnvelopeDto, description: '`provider.request_failed`, `upstreamCode` 1202–1203' })
  @ApiResponse({ status: 429, type: AlternateErrorEnvelopeDto, description: '`provider.request_failed`, `upstreamCode` 1100–1102 or 1302–1304' })
  @ApiResponse({ status: 502, type: AlternateErrorEnvelopeDto, description: '`provider.request_failed`, `upstreamCode` 5000 (or an answer outside the table)' })
  @ApiResponse({ status: 503, type: AlternateErrorEnvelopeDto, description: '`provider.request_failed` with `upstreamCode` 5001; `provider.unavailable` (not configured, no upstreamCode)' })
  @ApiResponse({ status: 504, type: AlternateErrorEnvelopeDto, description: '`provider.request_failed`, `upstreamCode` 5002' })
  create(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateAlternateTaskDto): Promise<AlternateTaskResponseDto> {
    return this.alternateTasks.create(key, dto);
  }
}

/** Internal: the alternate provider's status callbacks (not customer webhooks; no API key). */
@ApiTags('internal')
@Public()
@Controller('internal/alternate/callbacks')
export class AlternateCallbackController {
  constructor(private readonly callbacks: AlternateCallbackHandler) {}

  @Post()
  @HttpCode(200)
  @RouteConfig({ rawBody: true, bodyLimit: ALTERNATE_CALLBACK_BODY_LIMIT })
  @ApiOperation({ summary: "The provider's task object, signed the Standard Webhooks way over the exact raw body; 200 once verified, whatever it changes" })
  @ApiHeader({ name: 'webhook-id', required: true })
  @ApiHeader({ name: 'webhook-timestamp', required: true, description: 'Unix seconds; at most five minutes off' })
  @ApiHeader({ name: 'webhook-signature', required: true, description: 'One or more space-separated `v1,<base64>` signatures' })
  @ApiBody({ schema: { type: 'object', description: 'The upstream task object (task_id, task_status, task_info.external_task_id, task_result.videos)' } })
  @ApiOkResponse({ schema: { type: 'object', properties: { received: { type: 'boolean' } } } })
  @ApiResponse({ status: 401, type: AlternateErrorEnvelopeDto, description: '`provider.invalid_signature`: bad or missing signature, or timestamp outside five minutes' })
  async receive(@Body() body: string, @Headers() headers: Record<string, string | string[] | undefined>): Promise<{ received: true }> {
    await this.callbacks.handle(body, headers);
    return { received: true };
  }
}
