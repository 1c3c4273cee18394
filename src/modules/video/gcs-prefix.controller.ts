import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { Clock, DEFAULT_PAGE_LIMIT, decodeCursor, notFound, type Page, toPage, isUuid } from '../../../libs/common/index.js';
import { IdentityService } from '../identity/identity.service.js';
import { AdminRoute } from '../identity/index.js';
import { ApiAdminRefusals, ApiAdminUnauthorized, ApiErrors } from '../../app/openapi-errors.js';
import type { VideoGcsPrefixEntity } from './video-task.entity.js';
import { VideoTaskRepository } from './video-task.repository.js';

export class RegisterGcsPrefixDto {
  @ApiProperty({ example: 'gs://my-bucket/videos/', description: 'A bucket, a folder (ending in /) or one object' })
  @IsString() @MaxLength(1024) @Matches(/^gs:\/\/[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](\/\S*)?$/, { message: 'must be gs://<bucket>[/<path>]' })
  prefix!: string;
}

export class GcsPrefixPageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 100 })
  @IsOptional() @IsInt() @Min(1) @Max(100)
  limit?: number;

  @ApiPropertyOptional()
  @IsOptional() @IsString()
  after?: string;
}

export class GcsPrefixDto {
  @ApiProperty() id!: string;
  @ApiProperty() workspaceId!: string;
  @ApiProperty() prefix!: string;
  @ApiProperty() createdAt!: string;
}

export class GcsPrefixPageDto {
  @ApiProperty({ type: [GcsPrefixDto] }) items!: GcsPrefixDto[];
  @ApiProperty() hasMore!: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `after` for the next page; null on the last' }) nextCursor!: string | null;
}

const toDto = (row: VideoGcsPrefixEntity): GcsPrefixDto => ({
  id: row.id,
  workspaceId: row.workspaceId,
  prefix: row.prefix,
  createdAt: row.createdAt.toISOString(),
});

/**
 * Rule 4: `gs://` media must be authorized for the account ("registering an external object
 * or directory is done through support"). Support registers prefixes here; the worker accepts
 * a `gs://` asset only under one of its workspace's prefixes.
 */
@ApiTags('admin')
@AdminRoute()
@ApiAdminUnauthorized()
@ApiAdminRefusals()
@ApiErrors(404, [['admin.not_found', 'no such workspace']])
@Controller('admin/v1/workspaces/:id/gcs-prefixes')
export class GcsPrefixController {
  constructor(
    private readonly tasks: VideoTaskRepository,
    private readonly identity: IdentityService,
    private readonly clock: Clock,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Register a gs:// prefix for the workspace (repeating one is a no-op)' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: GcsPrefixDto })
  async register(@Param('id') id: string, @Body() body: RegisterGcsPrefixDto): Promise<GcsPrefixDto> {
    await this.workspace(id);
    return toDto(await this.tasks.addPrefix(id, body.prefix, this.clock.now()));
  }

  @Get()
  @ApiOperation({ summary: "The workspace's registered gs:// prefixes, newest first" })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: GcsPrefixPageDto })
  async list(@Param('id') id: string, @Query() query: GcsPrefixPageQueryDto): Promise<Page<GcsPrefixDto>> {
    await this.workspace(id);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    return toPage(await this.tasks.listPrefixes(id, limit, decodeCursor(query.after)), limit, toDto);
  }

  private async workspace(id: string): Promise<void> {
    if (!isUuid(id)) throw notFound('workspace');
    await this.identity.getWorkspace(id);
  }
}
