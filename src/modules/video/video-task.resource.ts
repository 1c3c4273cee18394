import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { VideoTaskStatus } from './video-task.entity.js';

export class VideoTaskOutputsDto {
  @ApiProperty({ type: [String], description: 'Temporary HTTPS links; empty while unfinished, after failure, or after expiry' })
  videos!: string[];
  @ApiProperty({ type: [String], maxItems: 0, description: 'Always empty' })
  images!: never[];
  @ApiPropertyOptional({ description: 'Video retention deadline: seven days after completion' })
  expiresAt?: string;
  @ApiPropertyOptional({ description: 'When the links in `videos` stop working (within one hour); read the task again for fresh ones' })
  urlsExpireAt?: string;
}

export class VideoTaskResponseDto {
  @ApiProperty({ example: 'omni:2f1c1e9e-0c7e-4f0a-9d55-1b1f7f6f2d11' })
  id!: string;
  @ApiProperty()
  model!: string;
  @ApiProperty({ enum: ['queued', 'running', 'succeeded', 'failed'] })
  status!: VideoTaskStatus;
  @ApiProperty({ type: VideoTaskOutputsDto })
  outputs!: VideoTaskOutputsDto;
  @ApiPropertyOptional({ enum: ['reconciliationRequired'], description: 'The upstream acceptance is being resolved: keep polling, do not resubmit' })
  phase?: 'reconciliationRequired';
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
  @ApiPropertyOptional()
  failureReason?: string;
}

export class VideoTaskPageDto {
  @ApiProperty({ type: [VideoTaskResponseDto] })
  items!: VideoTaskResponseDto[];
  @ApiProperty()
  hasMore!: boolean;
  @ApiProperty({ type: String, nullable: true })
  nextCursor!: string | null;
}
