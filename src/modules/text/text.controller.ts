import { applyDecorators, Body, Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors, ApiKeyUnauthorized } from '../../app/openapi-errors.js';
import { RequestErrorCode } from '../../../libs/common/index.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { findTextModel, listTextModels } from './text-models.js';
import { TextErrorCode as Code } from './text-errors.js';
import {
  CHAT_REQUEST_SCHEMA,
  CHAT_RESPONSE_SCHEMA,
  CHAT_STREAM_SCHEMA,
  MODEL_LIST_SCHEMA,
  MODEL_SCHEMA,
  RESPONSE_SCHEMA,
  RESPONSE_STREAM_SCHEMA,
  RESPONSES_REQUEST_SCHEMA,
} from './text.openapi.js';
import { TextHttpTransport } from './text-http.transport.js';

/** The refusals and upstream failures both operations answer (docs/text.md › Errors). */
const GenerationErrors = () =>
  applyDecorators(
    ApiErrors(400, [
      Code.InvalidField,
      Code.UnknownModel,
      Code.ToolChoiceUndeclared,
      Code.UnknownToolCall,
      [Code.UpstreamRejected, 'the upstream refused the request, its message kept'],
      RequestErrorCode.InvalidJson,
      RequestErrorCode.TooDeep,
      RequestErrorCode.TooManyItems,
    ]),
    ApiErrors(402, [['text.insufficient_balance', 'the wallet cannot cover the hold']]),
    ApiErrors(413, [[RequestErrorCode.BodyTooLarge, 'over TEXT_BODY_LIMIT_BYTES']]),
    ApiErrors(
      422,
      [
        Code.ParallelToolCallsUnsupported,
        Code.BackgroundUnsupported,
        Code.CandidateCountUnsupported,
        Code.ReasoningEffortUnsupported,
        Code.ThinkingBudgetUnsupported,
        Code.PenaltiesUnsupported,
        Code.FinalAssistantMessageUnsupported,
        Code.GcsUriUnsupported,
        Code.StreamFunctionCallArgumentsUnsupported,
        Code.MediaFetchFailed,
      ],
      { summary: 'a well-formed request for something unsupported, before any hold (docs/text.md)' },
    ),
    ApiErrors(429, [[Code.UpstreamRateLimited, 'with `Retry-After`']]),
    ApiErrors(502, [[Code.UpstreamError, 'the upstream failed otherwise']]),
    ApiErrors(503, [
      [Code.Unavailable, 'no upstream may serve the model for this key (in production, a live key and no provider credentials)'],
      Code.UpstreamUnavailable,
    ]),
    ApiErrors(504, [Code.UpstreamTimeout]),
  );

/** JSON when `stream` is false, Server-Sent Events when true. */
const SyncOrStream = (json: { $ref: string }, stream: { $ref: string }, description: string) =>
  ApiOkResponse({ description, content: { 'application/json': { schema: json }, 'text/event-stream': { schema: stream } } });

/**
 * The two text operations and the model list. Bodies are taken as plain objects (the strict
 * pipe skips `Object`): OpenAI clients send fields we accept and ignore, and message shapes
 * are polymorphic, so translateTextRequest validates them by hand before any hold.
 */
@ApiTags('text')
@ApiKeyRoute()
@ApiKeyUnauthorized('text')
@Controller('api/svc/v1')
export class TextController {
  constructor(private readonly text: TextHttpTransport) {}

  @Post('chat/completions')
  @RouteConfig({ bodyLimit: 'text' })
  @ApiOperation({ summary: 'Chat-Completions-style generation; SSE when stream is true' })
  @ApiBody({ schema: CHAT_REQUEST_SCHEMA })
  @SyncOrStream(CHAT_RESPONSE_SCHEMA, CHAT_STREAM_SCHEMA, 'A chat.completion, or with `stream: true` chat.completion.chunk events ending `data: [DONE]`')
  @GenerationErrors()
  chat(@CurrentKey() key: AuthenticatedKey, @Body() body: Record<string, unknown>, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.text.handle('chat', key, body, request, reply);
  }

  @Post('responses')
  @RouteConfig({ bodyLimit: 'text' })
  @ApiOperation({ summary: 'Responses-style generation; SSE when stream is true' })
  @ApiBody({ schema: RESPONSES_REQUEST_SCHEMA })
  @SyncOrStream(RESPONSE_SCHEMA, RESPONSE_STREAM_SCHEMA, 'A response, or with `stream: true` typed events ending with one terminal event')
  @GenerationErrors()
  responses(@CurrentKey() key: AuthenticatedKey, @Body() body: Record<string, unknown>, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.text.handle('responses', key, body, request, reply);
  }

  @Get('models')
  @ApiOperation({ summary: 'The text models (OpenAI list shape)' })
  @ApiOkResponse({ schema: MODEL_LIST_SCHEMA })
  models(): Record<string, unknown> {
    return listTextModels();
  }

  @Get('models/:id')
  @ApiOperation({ summary: 'One text model' })
  @ApiOkResponse({ schema: MODEL_SCHEMA })
  @ApiErrors(404, [Code.ModelNotFound])
  model(@Param('id') id: string): Record<string, unknown> {
    return findTextModel(id);
  }
}
