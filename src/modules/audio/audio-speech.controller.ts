import { Body, Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
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
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { AudioSpeechService } from './audio-speech.service.js';
import { CreateSpeechDto } from './dto/create-audio-generation.dto.js';

@ApiTags('audio')
@ApiKeyRoute()
@Controller('v1/audio')
export class AudioSpeechController {
  constructor(private readonly speech: AudioSpeechService) {}

  @Post('speech')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Speak a text_to_speech request as a chunked audio stream',
    description:
      'The body is a generation request (`mode` absent or `text_to_speech`). The answer carries `x-svc-task-id`; the chunks alone do not confirm success: poll GET /v1/audio/generations/{id}. A body cut short means the stream broke.',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Repeat the same request with the same key after a lost answer: it replays the stored audio' })
  @ApiProduces('audio/mpeg', 'audio/L16;rate=24000;channels=1')
  @ApiOkResponse({ description: 'The audio, chunked; headers `x-svc-task-id` and, on a replay, `Idempotency-Replay: true`' })
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
