import { Body, Controller, Headers, HttpCode, Post, Req, Res, UseInterceptors } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiPaymentRequiredResponse,
  ApiProduces,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { AudioSpeechService } from './audio-speech.service.js';
import { AUDIO_REQUEST_SHAPE, BodyBoundInterceptor } from './body-bound.interceptor.js';
import { CreateSpeechDto } from './dto/create-audio-generation.dto.js';

@ApiTags('audio')
@ApiKeyRoute()
@ApiUnauthorizedResponse({ type: ErrorEnvelopeDto, description: '`audio.unauthorized`: missing, malformed, unknown or revoked key' })
@Controller('v1/audio')
export class AudioSpeechController {
  constructor(private readonly speech: AudioSpeechService) {}

  @Post('speech')
  @HttpCode(200)
  @UseInterceptors(new BodyBoundInterceptor(AUDIO_REQUEST_SHAPE))
  @ApiOperation({
    summary: 'Speak a text_to_speech request as a chunked audio stream',
    description:
      'The body is a generation request (`mode` absent or `text_to_speech`). The answer carries `x-svc-task-id`; the chunks alone do not confirm success: poll GET /v1/audio/generations/{id}. A body cut short means the stream broke.',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 128 printable non-space ASCII characters. Repeat the same request with the same key after a lost answer: 409 while it runs, then the stored audio' })
  @ApiProduces('audio/mpeg', 'audio/L16;rate=24000;channels=1')
  @ApiOkResponse({
    description: 'The audio, chunked (`audio/mpeg`, or `audio/L16;rate=24000;channels=1` for `pcm_24000`)',
    content: { 'audio/mpeg': { schema: { type: 'string', format: 'binary' } }, 'audio/L16;rate=24000;channels=1': { schema: { type: 'string', format: 'binary' } } },
    headers: {
      'x-svc-task-id': { description: 'The audio task (`audio:…`): poll GET /v1/audio/generations/{id} for its outcome', schema: { type: 'string' } },
      'Idempotency-Replay': { description: '`true` when the stored audio of an earlier request under the same key is replayed', schema: { type: 'string' } },
    },
  })
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: 'invalid request (before any hold), or `audio.generation_rejected` (the upstream refused it; the task failed, nothing charged)' })
  @ApiPaymentRequiredResponse({ type: ErrorEnvelopeDto, description: '`audio.insufficient_balance`' })
  @ApiConflictResponse({ type: ErrorEnvelopeDto, description: '`audio.idempotency_conflict`, `audio.request_in_progress`, `audio.generation_failed`, `audio.replay_expired`' })
  @ApiTooManyRequestsResponse({ type: ErrorEnvelopeDto, description: '`audio.too_many_pending`' })
  @ApiServiceUnavailableResponse({ type: ErrorEnvelopeDto, description: '`audio.unavailable` (retry later) or `audio.reconciliation_required` (poll the task in `x-svc-task-id`)' })
  speak(
    @CurrentKey() key: AuthenticatedKey,
    @Body() dto: CreateSpeechDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.speech.speak(key, dto, idempotencyKey, request, reply);
  }
}
