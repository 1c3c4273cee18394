import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res, UseInterceptors } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPaymentRequiredResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Page } from '../../../libs/common/index.js';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { AudioGenerationService } from './audio-generation.service.js';
import { parseIdempotencyKey } from './audio-idempotency.js';
import { AUDIO_REQUEST_SHAPE, BodyBoundInterceptor } from './body-bound.interceptor.js';
import { AudioEstimateDto, AudioModelListDto, AudioTaskPageDto, AudioTaskResponseDto } from './audio-task.resource.js';
import { AudioTaskService } from './audio-task.service.js';
import { CreateAudioGenerationDto, ListAudioGenerationsQueryDto } from './dto/create-audio-generation.dto.js';

const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  required: false,
  description: '1 to 128 printable non-space ASCII characters; repeat the same request with the same key after a lost answer',
};

@ApiTags('audio')
@ApiKeyRoute()
@ApiUnauthorizedResponse({ type: ErrorEnvelopeDto, description: '`audio.unauthorized`: missing, malformed, unknown or revoked key' })
@Controller('v1/audio')
export class AudioController {
  constructor(
    private readonly generations: AudioGenerationService,
    private readonly audioTasks: AudioTaskService,
  ) {}

  @Post('generations')
  @HttpCode(200)
  @UseInterceptors(new BodyBoundInterceptor(AUDIO_REQUEST_SHAPE))
  @ApiOperation({ summary: 'Create a speech or dialogue task; poll it until succeeded or failed' })
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiOkResponse({ type: AudioTaskResponseDto, description: 'The task; `Idempotency-Replay: true` when the key had already created it' })
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: 'invalid fields, unsupported mode or voice, text over 2,000 characters, unknown fields; before any hold' })
  @ApiPaymentRequiredResponse({ type: ErrorEnvelopeDto, description: '`audio.insufficient_balance`' })
  @ApiConflictResponse({ type: ErrorEnvelopeDto, description: '`audio.idempotency_conflict` or `audio.request_in_progress`' })
  @ApiTooManyRequestsResponse({ type: ErrorEnvelopeDto, description: '`audio.too_many_pending`' })
  @ApiServiceUnavailableResponse({ type: ErrorEnvelopeDto, description: '`audio.unavailable`' })
  async create(
    @CurrentKey() key: AuthenticatedKey,
    @Body() dto: CreateAudioGenerationDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AudioTaskResponseDto> {
    const created = await this.generations.create(key, dto, { endpoint: 'generations', idempotencyKey: parseIdempotencyKey(idempotencyKey) });
    if (created.replayed) void reply.header('idempotency-replay', 'true');
    return created.task;
  }

  @Get('generations')
  @ApiOperation({ summary: "The calling key's audio tasks, newest first (cursor paging); same as GET /api/svc/v1/audio/generations" })
  @ApiOkResponse({ type: AudioTaskPageDto })
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: '`audio.invalid_field` or `audio.unknown_field`: a malformed `limit`, `after` or `status`, or an unknown parameter' })
  list(@CurrentKey() key: AuthenticatedKey, @Query() query: ListAudioGenerationsQueryDto): Promise<Page<AudioTaskResponseDto>> {
    return this.audioTasks.list(key, query);
  }

  @Get('generations/:id')
  @ApiOperation({ summary: 'Read an audio task (full id with `audio:`); every read mints fresh links' })
  @ApiOkResponse({ type: AudioTaskResponseDto })
  @ApiNotFoundResponse({ type: ErrorEnvelopeDto, description: '`audio.not_found`: missing, or owned by another key' })
  get(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<AudioTaskResponseDto> {
    return this.audioTasks.get(key, id);
  }

  @Post('estimate')
  @HttpCode(200)
  @UseInterceptors(new BodyBoundInterceptor(AUDIO_REQUEST_SHAPE))
  @ApiOperation({ summary: 'What a generation request would cost: the same validation, no hold, no task' })
  @ApiOkResponse({ type: AudioEstimateDto })
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: 'the creation refusals (fields, mode, voices, text length, webhook endpoint)' })
  @ApiServiceUnavailableResponse({ type: ErrorEnvelopeDto, description: '`audio.unavailable`' })
  estimate(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateAudioGenerationDto): Promise<AudioEstimateDto> {
    return this.generations.estimate(key, dto);
  }

  @Get('models')
  @ApiOperation({ summary: 'Audio models: supported modes, output formats, limits and final prices' })
  @ApiOkResponse({ type: AudioModelListDto })
  models(@CurrentKey() key: AuthenticatedKey): AudioModelListDto {
    return this.audioTasks.models(key);
  }
}

/** The listing path of the spec (Endpoints › Audio 3) and the retrieval beside it (DESIGN §4). */
@ApiTags('audio')
@ApiKeyRoute()
@ApiUnauthorizedResponse({ type: ErrorEnvelopeDto, description: '`audio.unauthorized`: missing, malformed, unknown or revoked key' })
@Controller('api/svc/v1/audio/generations')
export class AudioListingController {
  constructor(private readonly audioTasks: AudioTaskService) {}

  @Get()
  @ApiOperation({ summary: "The calling key's audio tasks, newest first (cursor paging)" })
  @ApiOkResponse({ type: AudioTaskPageDto })
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: '`audio.invalid_field` or `audio.unknown_field`: a malformed `limit`, `after` or `status`, or an unknown parameter' })
  list(@CurrentKey() key: AuthenticatedKey, @Query() query: ListAudioGenerationsQueryDto): Promise<Page<AudioTaskResponseDto>> {
    return this.audioTasks.list(key, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read an audio task; every read mints fresh links' })
  @ApiOkResponse({ type: AudioTaskResponseDto })
  @ApiNotFoundResponse({ type: ErrorEnvelopeDto, description: '`audio.not_found`' })
  get(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<AudioTaskResponseDto> {
    return this.audioTasks.get(key, id);
  }
}
