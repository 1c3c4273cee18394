import { Body, Controller, Headers, HttpCode, Post, UseGuards } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequestErrorCode } from '../../../libs/common/index.js';
import { ApiErrors } from '../../app/openapi-errors.js';
import { namedSchema } from '../../app/openapi-schemas.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey, Public } from '../identity/index.js';
import { ALTERNATE_CALLBACK_BODY_LIMIT } from './alternate.constants.js';
import { AlternateBodyBoundGuard } from './alternate-body-bound.guard.js';
import { AlternateCallbackHandler } from './alternate-callbacks.js';
import { AlternateTaskService } from './alternate-task.service.js';
import { AlternateErrorCode as Code } from './alternate-errors.js';
import { ALTERNATE_ENVELOPE, AlternateErrorEnvelopeDto, AlternateTaskResponseDto, CallbackReceivedDto } from './alternate-task.resource.js';
import { CreateAlternateTaskDto } from './dto/create-alternate-task.dto.js';

/** Errors in the alternate envelope (`error_code`, `error`, `error_params`). */
const AlternateErrors = (status: number, cases: Parameters<typeof ApiErrors>[1]) => ApiErrors(status, cases, { envelope: ALTERNATE_ENVELOPE });

/** The provider's task object as it posts it; the handler reads only what it names. */
const CALLBACK_BODY = namedSchema('AlternateCallbackBody', {
  type: 'object',
  description: 'The upstream task object (task_id, task_status, task_info.external_task_id, task_result.videos)',
});

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
  @UseGuards(AlternateBodyBoundGuard)
  @ApiOperation({
    summary: 'Create an alternate-provider (Kling) video task; the upstream is asked synchronously. Poll it at GET /v1/contents/generations/tasks/{id}',
  })
  @ApiOkResponse({ type: AlternateTaskResponseDto })
  @AlternateErrors(400, [
    [Code.InvalidField, 'no `upstreamCode`'],
    [Code.UnknownField, 'no `upstreamCode`'],
    [Code.InvalidImage, 'no `upstreamCode`'],
    [Code.RequestFailed, 'the upstream refused: `upstreamCode` 1200–1201, 1300–1301'],
    RequestErrorCode.InvalidJson,
  ])
  @AlternateErrors(401, [
    ['provider.unauthorized', 'our API key: missing, malformed, unknown or revoked'],
    [Code.RequestFailed, '`upstreamCode` 1000–1004: our upstream credentials'],
  ])
  @AlternateErrors(402, ['provider.insufficient_balance'])
  @AlternateErrors(403, [[Code.RequestFailed, '`upstreamCode` 1103']])
  @AlternateErrors(404, [[Code.RequestFailed, '`upstreamCode` 1202–1203']])
  @AlternateErrors(413, [[RequestErrorCode.BodyTooLarge, 'over TEXT_BODY_LIMIT_BYTES']])
  @AlternateErrors(429, [[Code.RequestFailed, '`upstreamCode` 1100–1102 or 1302–1304']])
  @AlternateErrors(502, [[Code.RequestFailed, '`upstreamCode` 5000, or an answer outside the table']])
  @AlternateErrors(503, [
    [Code.RequestFailed, '`upstreamCode` 5001, or the upstream unreachable'],
    [Code.Unavailable, 'not configured; no `upstreamCode`'],
  ])
  @AlternateErrors(504, [[Code.RequestFailed, '`upstreamCode` 5002']])
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
  @ApiBody({ schema: CALLBACK_BODY })
  @ApiOkResponse({ type: CallbackReceivedDto })
  @AlternateErrors(401, [[Code.InvalidSignature, 'bad or missing signature, or timestamp outside five minutes']])
  @AlternateErrors(413, [[RequestErrorCode.BodyTooLarge, 'over ALTERNATE_CALLBACK_BODY_LIMIT']])
  async receive(@Body() body: string, @Headers() headers: Record<string, string | string[] | undefined>): Promise<{ received: true }> {
    await this.callbacks.handle(body, headers);
    return { received: true };
  }
}
