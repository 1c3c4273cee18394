import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import type { VideoTaskStatus } from './video-task.entity.js';

export class VideoTaskOutputsDto {
  @ApiProperty({ type: [String], items: { type: 'string', format: 'uri' }, description: 'Temporary HTTPS links; empty while unfinished, after failure, or after expiry' })
  videos!: string[];
  @ApiProperty({ type: [String], maxItems: 0, description: 'Always empty' })
  images!: never[];
  @ApiPropertyOptional({ format: 'date-time', description: 'Video retention deadline: seven days after completion' })
  expiresAt?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'When the links in `videos` stop working (within one hour); read the task again for fresh ones' })
  urlsExpireAt?: string;
}

export class VideoTaskResponseDto {
  @ApiProperty({ pattern: '^omni:[0-9a-f-]{36}$', example: 'omni:2f1c1e9e-0c7e-4f0a-9d55-1b1f7f6f2d11' })
  id!: string;
  @ApiProperty({ enum: ['vendor-omni-1.1-flash-preview', 'vendor-omni-flash-preview'] })
  model!: string;
  @ApiProperty({ enum: ['queued', 'running', 'succeeded', 'failed'] })
  status!: VideoTaskStatus;
  @ApiProperty({ type: VideoTaskOutputsDto })
  outputs!: VideoTaskOutputsDto;
  @ApiPropertyOptional({ enum: ['reconciliationRequired'], description: 'The upstream acceptance is being resolved: keep polling, do not resubmit' })
  phase?: 'reconciliationRequired';
  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
  @ApiPropertyOptional()
  failureReason?: string;
}

/**
 * What the shared task endpoint answers: an omni task, or an `alt:` task, whose schema the
 * alternate provider's module declares (it registers its tasks with GenerationTaskReaders). Named
 * so that a client generated from the document takes every answer the endpoint gives.
 */
export const SHARED_TASK_SCHEMA = { oneOf: [{ $ref: getSchemaPath(VideoTaskResponseDto) }, { $ref: getSchemaPath('AlternateTaskResponseDto') }] };

export class VideoTaskPageDto {
  @ApiProperty({ type: 'array', items: SHARED_TASK_SCHEMA, description: 'Omni tasks and, for `alt:` ids, alternate-provider tasks, newest first' })
  items!: Array<VideoTaskResponseDto | object>;
  @ApiProperty()
  hasMore!: boolean;
  @ApiProperty({ type: String, nullable: true })
  nextCursor!: string | null;
}
