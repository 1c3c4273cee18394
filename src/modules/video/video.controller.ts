import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPaymentRequiredResponse,
  ApiResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Page } from '../../../libs/common/index.js';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { CreateVideoTaskDto, ListVideoTasksQueryDto } from './dto/create-video-task.dto.js';
import { VideoTaskService } from './video-task.service.js';
import { VideoTaskPageDto, VideoTaskResponseDto } from './video-task.resource.js';

@ApiTags('video')
@ApiKeyRoute()
@Controller('v1/contents/generations/tasks')
export class VideoController {
  constructor(private readonly videoTasks: VideoTaskService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create an omni video task (one video with native audio); poll it until succeeded or failed' })
  @ApiOkResponse({ type: VideoTaskResponseDto })
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: 'invalid or unsupported parameters, before any reservation' })
  @ApiPaymentRequiredResponse({ type: ErrorEnvelopeDto, description: '`video.insufficient_balance`' })
  @ApiServiceUnavailableResponse({ type: ErrorEnvelopeDto, description: '`video.unavailable`: video generation temporarily unavailable' })
  create(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateVideoTaskDto): Promise<VideoTaskResponseDto> {
    return this.videoTasks.create(key, dto);
  }

  @Get()
  @ApiOperation({ summary: "The calling key's video tasks, omni and alternate-provider (`alt:`), newest first (cursor paging)" })
  @ApiOkResponse({ type: VideoTaskPageDto, description: 'Items are omni tasks or, for `alt:` ids, AlternateTaskResponseDto' })
  list(@CurrentKey() key: AuthenticatedKey, @Query() query: ListVideoTasksQueryDto): Promise<Page<VideoTaskResponseDto | object>> {
    return this.videoTasks.list(key, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a video task (full id with `omni:` or `alt:`); every read mints fresh links' })
  @ApiOkResponse({ type: VideoTaskResponseDto, description: 'An omni task; for an `alt:` id, an alternate-provider task (schema AlternateTaskResponseDto)' })
  @ApiNotFoundResponse({ type: ErrorEnvelopeDto, description: '`video.not_found`: missing, or owned by another key' })
  get(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<VideoTaskResponseDto | object> {
    return this.videoTasks.get(key, id);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Not supported: video tasks cannot be cancelled or deleted' })
  @ApiResponse({ status: 405, type: ErrorEnvelopeDto, description: '`video.operation_not_supported` (omni); for an `alt:` id the alternate envelope (AlternateErrorEnvelopeDto) with `error_code` `provider.operation_not_supported`' })
  delete(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<never> {
    return this.videoTasks.delete(key, id);
  }
}

/** The spec's un-prefixed path (Endpoints › Video 5) answers DELETE the same way. */
@ApiTags('video')
@ApiKeyRoute()
@Controller('contents/generations/tasks')
export class UnprefixedVideoController {
  constructor(private readonly videoTasks: VideoTaskService) {}

  @Delete(':id')
  @ApiOperation({ summary: 'Not supported: 405 `video.operation_not_supported` (omni) or `provider.operation_not_supported` in the alternate envelope (`alt:`)' })
  @ApiResponse({ status: 405, type: ErrorEnvelopeDto })
  delete(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<never> {
    return this.videoTasks.delete(key, id);
  }
}
