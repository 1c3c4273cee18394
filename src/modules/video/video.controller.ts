import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { type Page, RequestErrorCode } from '../../../libs/common/index.js';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiErrors, ApiKeyUnauthorized } from '../../app/openapi-errors.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { CreateVideoTaskDto, ListVideoTasksQueryDto } from './dto/create-video-task.dto.js';
import { VideoErrorCode as Code } from './video-errors.js';
import { VideoTaskService } from './video-task.service.js';
import { SHARED_TASK_SCHEMA, VideoTaskPageDto, VideoTaskResponseDto } from './video-task.resource.js';

/** The alternate provider's error envelope (declared by its module): what DELETE of an `alt:` task answers. */
const ALTERNATE_ERROR_SCHEMA = 'AlternateErrorEnvelopeDto';

/** Both DELETE paths (spec, Endpoints › Video 4 and 5). */
const DeleteRefused = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Not supported: video tasks cannot be cancelled or deleted',
      description:
        'An omni task answers 405 `video.operation_not_supported` (`Allow: GET`). An `alt:` task answers 405 in the alternate envelope (AlternateErrorEnvelopeDto) with `error_code` `provider.operation_not_supported`; nothing is released or cancelled.',
    }),
    ApiErrors(404, [[Code.NotFound, 'missing, or owned by another key']]),
    ApiExtraModels(ErrorEnvelopeDto),
    ApiResponse({
      status: 405,
      description: `\`${Code.OperationNotSupported}\` (omni task); \`provider.operation_not_supported\` in the alternate envelope (\`alt:\` task)`,
      content: {
        'application/json': {
          schema: { oneOf: [{ $ref: getSchemaPath(ErrorEnvelopeDto) }, { $ref: getSchemaPath(ALTERNATE_ERROR_SCHEMA) }] },
          examples: {
            [Code.OperationNotSupported]: { summary: Code.OperationNotSupported, description: 'omni task', value: { error: { code: Code.OperationNotSupported, message: 'operation not supported' } } },
            'provider.operation_not_supported': {
              summary: 'provider.operation_not_supported',
              description: '`alt:` task',
              value: { error_code: 'provider.operation_not_supported', error: 'operation not supported', error_params: { provider: 'kling', status: 405, upstreamCode: 0 } },
            },
          },
        },
      },
    }),
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
  @ApiExtraModels(VideoTaskResponseDto)
  @ApiOkResponse({ schema: SHARED_TASK_SCHEMA, description: 'An omni task; for an `alt:` id, an alternate-provider task (AlternateTaskResponseDto)' })
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
