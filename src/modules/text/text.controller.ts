import { Body, Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiPaymentRequiredResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { findTextModel, listTextModels } from './text-models.js';
import { CHAT_REQUEST_SCHEMA, CHAT_RESPONSE_SCHEMA, MODEL_LIST_SCHEMA, MODEL_SCHEMA, RESPONSE_SCHEMA, RESPONSES_REQUEST_SCHEMA } from './text.openapi.js';
import { TextHttpTransport } from './text-http.transport.js';

const UNAVAILABLE = '`text.unavailable`: no upstream may serve the model for this key (in production, a live key and no provider credentials); `text.upstream_unavailable`';

/**
 * The two text operations and the model list. Bodies are taken as plain objects (the strict
 * pipe skips `Object`): OpenAI clients send fields we accept and ignore, and message shapes
 * are polymorphic, so translateTextRequest validates them by hand before any hold.
 */
@ApiTags('text')
@ApiKeyRoute()
@ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: '`text.invalid_field`, `text.unknown_model`, `text.tool_choice_undeclared`, `text.unknown_tool_call`, `text.upstream_rejected`' })
@ApiUnprocessableEntityResponse({ type: ErrorEnvelopeDto, description: 'a well-formed request for something unsupported (docs/text.md)' })
@ApiPaymentRequiredResponse({ type: ErrorEnvelopeDto, description: '`text.insufficient_balance`' })
@Controller('api/svc/v1')
export class TextController {
  constructor(private readonly text: TextHttpTransport) {}

  @Post('chat/completions')
  @RouteConfig({ bodyLimit: 'text' })
  @ApiServiceUnavailableResponse({ type: ErrorEnvelopeDto, description: UNAVAILABLE })
  @ApiOperation({ summary: 'Chat-Completions-style generation; SSE when stream is true' })
  @ApiBody({ schema: CHAT_REQUEST_SCHEMA })
  @ApiOkResponse({ schema: CHAT_RESPONSE_SCHEMA })
  chat(@CurrentKey() key: AuthenticatedKey, @Body() body: Record<string, unknown>, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.text.handle('chat', key, body, request, reply);
  }

  @Post('responses')
  @RouteConfig({ bodyLimit: 'text' })
  @ApiServiceUnavailableResponse({ type: ErrorEnvelopeDto, description: UNAVAILABLE })
  @ApiOperation({ summary: 'Responses-style generation; SSE when stream is true' })
  @ApiBody({ schema: RESPONSES_REQUEST_SCHEMA })
  @ApiOkResponse({ schema: RESPONSE_SCHEMA })
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
  model(@Param('id') id: string): Record<string, unknown> {
    return findTextModel(id);
  }
}
