import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Page } from '../../../libs/common/index.js';
import { ApiErrors, ApiKeyUnauthorized } from '../../app/openapi-errors.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { AudioErrorCode as Code } from './audio-errors.js';
import { AudioGenerationService } from './audio-generation.service.js';
import { parseIdempotencyKey } from './audio-idempotency.js';
import { AUDIO_LIST_REFUSALS, AUDIO_NOT_FOUND, AUDIO_REQUEST_REFUSALS, AUDIO_WEBHOOK_NOT_FOUND } from './audio.openapi.js';
import { AUDIO_REQUEST_SHAPE, BodyBoundGuard } from './body-bound.guard.js';
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
@ApiKeyUnauthorized('audio')
@Controller('v1/audio')
export class AudioController {
  constructor(
    private readonly generations: AudioGenerationService,
    private readonly audioTasks: AudioTaskService,
  ) {}

  @Post('generations')
  @HttpCode(200)
  @UseGuards(new BodyBoundGuard(AUDIO_REQUEST_SHAPE))
  @ApiOperation({ summary: 'Create a speech or dialogue task; poll it until succeeded or failed' })
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiOkResponse({ type: AudioTaskResponseDto, description: 'The task; `Idempotency-Replay: true` when the key had already created it' })
  @ApiErrors(400, [...AUDIO_REQUEST_REFUSALS, Code.InvalidIdempotencyKey], { summary: 'before any hold' })
  @ApiErrors(402, [Code.InsufficientBalance])
  @ApiErrors(404, [AUDIO_WEBHOOK_NOT_FOUND])
  @ApiErrors(409, [[Code.IdempotencyConflict, 'the key was used with another request'], [Code.RequestInProgress, 'the request under this key is still being decided']])
  @ApiErrors(429, [[Code.TooManyPending, 'with `Retry-After`']])
  @ApiErrors(503, [Code.Unavailable])
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
  @ApiErrors(400, AUDIO_LIST_REFUSALS)
  list(@CurrentKey() key: AuthenticatedKey, @Query() query: ListAudioGenerationsQueryDto): Promise<Page<AudioTaskResponseDto>> {
    return this.audioTasks.list(key, query);
  }

  @Get('generations/:id')
  @ApiOperation({ summary: 'Read an audio task (full id with `audio:`); every read mints fresh links' })
  @ApiOkResponse({ type: AudioTaskResponseDto })
  @ApiErrors(404, [AUDIO_NOT_FOUND])
  get(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<AudioTaskResponseDto> {
    return this.audioTasks.get(key, id);
  }

  @Post('estimate')
  @HttpCode(200)
  @UseGuards(new BodyBoundGuard(AUDIO_REQUEST_SHAPE))
  @ApiOperation({ summary: 'What a generation request would cost: the same validation, no hold, no task' })
  @ApiOkResponse({ type: AudioEstimateDto })
  @ApiErrors(400, AUDIO_REQUEST_REFUSALS, { summary: 'the creation refusals' })
  @ApiErrors(404, [AUDIO_WEBHOOK_NOT_FOUND])
  @ApiErrors(503, [Code.Unavailable])
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
@ApiKeyUnauthorized('audio')
@Controller('api/svc/v1/audio/generations')
export class AudioListingController {
  constructor(private readonly audioTasks: AudioTaskService) {}

  @Get()
  @ApiOperation({ summary: "The calling key's audio tasks, newest first (cursor paging)" })
  @ApiOkResponse({ type: AudioTaskPageDto })
  @ApiErrors(400, AUDIO_LIST_REFUSALS)
  list(@CurrentKey() key: AuthenticatedKey, @Query() query: ListAudioGenerationsQueryDto): Promise<Page<AudioTaskResponseDto>> {
    return this.audioTasks.list(key, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read an audio task; every read mints fresh links' })
  @ApiOkResponse({ type: AudioTaskResponseDto })
  @ApiErrors(404, [AUDIO_NOT_FOUND])
  get(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<AudioTaskResponseDto> {
    return this.audioTasks.get(key, id);
  }
}
