import { Body, Controller, Headers, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AUDIO_CONTENT_TYPES } from '../../../libs/providers/index.js';
import { ApiErrors, ApiKeyUnauthorized } from '../../app/openapi-errors.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { AudioErrorCode as Code } from './audio-errors.js';
import { AUDIO_REQUEST_REFUSALS, AUDIO_WEBHOOK_NOT_FOUND } from './audio.openapi.js';
import { AudioSpeechService } from './audio-speech.service.js';
import { AUDIO_REQUEST_SHAPE, BodyBoundGuard } from './body-bound.guard.js';
import { CreateSpeechDto } from './dto/create-audio-generation.dto.js';

@ApiTags('audio')
@ApiKeyRoute()
@ApiKeyUnauthorized('audio')
@Controller('v1/audio')
export class AudioSpeechController {
  constructor(private readonly speech: AudioSpeechService) {}

  @Post('speech')
  @HttpCode(200)
  @UseGuards(new BodyBoundGuard(AUDIO_REQUEST_SHAPE))
  @ApiOperation({
    summary: 'Speak a text_to_speech request as a chunked audio stream',
    description:
      'The body is a generation request (`mode` absent or `text_to_speech`). The answer carries `x-svc-task-id`; the chunks alone do not confirm success: poll GET /v1/audio/generations/{id}. A body cut short means the stream broke.',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 128 printable non-space ASCII characters. Repeat the same request with the same key after a lost answer: 409 while it runs, then the stored audio' })
  @ApiOkResponse({
    description: `The audio, chunked, in the content type of \`controls.outputFormat\`: ${Object.entries(AUDIO_CONTENT_TYPES)
      .map(([format, type]) => `\`${type}\` for \`${format}\``)
      .join(', ')}`,
    content: Object.fromEntries(Object.values(AUDIO_CONTENT_TYPES).map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
    headers: {
      'x-svc-task-id': { description: 'The audio task (`audio:…`): poll GET /v1/audio/generations/{id} for its outcome', schema: { type: 'string' } },
      'Idempotency-Replay': { description: '`true` when the stored audio of an earlier request under the same key is replayed', schema: { type: 'string' } },
    },
  })
  @ApiErrors(400, [
    ...AUDIO_REQUEST_REFUSALS,
    Code.InvalidIdempotencyKey,
    [Code.GenerationRejected, 'the upstream refused it; the task failed, nothing charged'],
  ])
  @ApiErrors(402, [Code.InsufficientBalance])
  @ApiErrors(404, [AUDIO_WEBHOOK_NOT_FOUND])
  @ApiErrors(409, [
    [Code.IdempotencyConflict, 'the key was used with another request'],
    [Code.RequestInProgress, 'the request under this key is still running'],
    [Code.GenerationFailed, 'the request under this key failed; use a new key'],
    [Code.ReplayExpired, 'the audio under this key is no longer stored'],
  ])
  @ApiErrors(429, [[Code.TooManyPending, 'with `Retry-After`']])
  @ApiErrors(503, [
    [Code.Unavailable, 'retry later'],
    [Code.ReconciliationRequired, 'poll the task in `x-svc-task-id`'],
  ])
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
