import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { type Page, RequestErrorCode } from '../../../libs/common/index.js';
import { ApiErrors, ApiKeyUnauthorized } from '../../app/openapi-errors.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { CreateVideoTaskDto, ListVideoTasksQueryDto } from './dto/create-video-task.dto.js';
import { VideoErrorCode as Code } from './video-errors.js';
import { VideoTaskService } from './video-task.service.js';
import { VideoTaskPageDto, VideoTaskResponseDto } from './video-task.resource.js';

/** Both DELETE paths (spec, Endpoints › Video 4 and 5). */
const DeleteRefused = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Not supported: video tasks cannot be cancelled or deleted',
      description:
        'An omni task answers 405 `video.operation_not_supported` (`Allow: GET`). An `alt:` task answers 405 in the alternate envelope (AlternateErrorEnvelopeDto) with `error_code` `provider.operation_not_supported`; nothing is released or cancelled.',
    }),
    ApiErrors(404, [[Code.NotFound, 'missing, or owned by another key']]),
    ApiErrors(405, [[Code.OperationNotSupported, 'omni task; see the description for `alt:` tasks']]),
  );

@ApiTags('video')
@ApiKeyRoute()
@ApiKeyUnauthorized('video')
@Controller('v1/contents/generations/tasks')
export class VideoController {
  constructor(private readonly videoTasks: VideoTaskService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create an omni video task (one video with native audio); poll it until succeeded or failed' })
  @ApiOkResponse({ type: VideoTaskResponseDto })
  @ApiErrors(
    400,
    [Code.InvalidField, Code.UnknownField, Code.UnsupportedMode, Code.UnsupportedResolution, Code.ConflictingAssets, Code.ModeAssetsMismatch, RequestErrorCode.InvalidJson],
    { summary: 'invalid or unsupported parameters, before any reservation' },
  )
  @ApiErrors(402, ['video.insufficient_balance'])
  @ApiErrors(503, [[Code.Unavailable, 'video generation temporarily unavailable']])
  create(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateVideoTaskDto): Promise<VideoTaskResponseDto> {
    return this.videoTasks.create(key, dto);
  }

  @Get()
  @ApiOperation({ summary: "The calling key's video tasks, omni and alternate-provider (`alt:`), newest first (cursor paging)" })
  @ApiOkResponse({ type: VideoTaskPageDto, description: 'Items are omni tasks or, for `alt:` ids, AlternateTaskResponseDto' })
  @ApiErrors(400, [[Code.InvalidField, 'a malformed `limit` or `after`'], [Code.UnknownField, 'an unknown parameter']])
  list(@CurrentKey() key: AuthenticatedKey, @Query() query: ListVideoTasksQueryDto): Promise<Page<VideoTaskResponseDto | object>> {
    return this.videoTasks.list(key, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a video task (full id with `omni:` or `alt:`); every read mints fresh links' })
  @ApiOkResponse({ type: VideoTaskResponseDto, description: 'An omni task; for an `alt:` id, an alternate-provider task (schema AlternateTaskResponseDto)' })
  @ApiErrors(404, [[Code.NotFound, 'missing, or owned by another key']])
  get(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<VideoTaskResponseDto | object> {
    return this.videoTasks.get(key, id);
  }

  @Delete(':id')
  @DeleteRefused()
  delete(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<never> {
    return this.videoTasks.delete(key, id);
  }
}

/** The spec's un-prefixed path (Endpoints › Video 5) answers DELETE the same way. */
@ApiTags('video')
@ApiKeyRoute()
@ApiKeyUnauthorized('video')
@Controller('contents/generations/tasks')
export class UnprefixedVideoController {
  constructor(private readonly videoTasks: VideoTaskService) {}

  @Delete(':id')
  @DeleteRefused()
  delete(@CurrentKey() key: AuthenticatedKey, @Param('id') id: string): Promise<never> {
    return this.videoTasks.delete(key, id);
  }
}
