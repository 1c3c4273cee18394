import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import type { AlternateAspectRatio, AlternateMode } from '../../../../libs/providers/index.js';
import { Optional, StorableText } from '../../../app/dto-fields.js';
import { ALTERNATE_VIDEO_MODELS, type AlternateVideoModel } from '../../billing/index.js';

export const ALTERNATE_DEFAULT_MODEL: AlternateVideoModel = 'kling-v2-6';
export const ALTERNATE_DURATIONS = [5, 10] as const;
export const ALTERNATE_ASPECT_RATIOS: readonly AlternateAspectRatio[] = ['16:9', '9:16', '1:1'];
export const ALTERNATE_MODES: readonly AlternateMode[] = ['std', 'pro'];
/** The upstream takes at most 2,500 characters of prompt and of negative prompt. */
export const ALTERNATE_MAX_PROMPT = 2500;
/**
 * An image field: an HTTPS URL (at most 4,096 characters) or Base64 (raw or a data URL) of at
 * most 10 MiB of image, i.e. 14 MiB of text; the route's body limit bounds it too.
 */
export const ALTERNATE_MAX_IMAGE_FIELD = 14 * 1024 * 1024;

/** `POST /v1/alternate/video/tasks` (DESIGN §4). Unknown fields are refused (400). */
export class CreateAlternateTaskDto {
  @ApiPropertyOptional({ enum: ALTERNATE_VIDEO_MODELS, default: ALTERNATE_DEFAULT_MODEL })
  @Optional() @IsIn(ALTERNATE_VIDEO_MODELS)
  model?: AlternateVideoModel;

  @ApiProperty({ minLength: 1, maxLength: ALTERNATE_MAX_PROMPT })
  @IsString() @Length(1, ALTERNATE_MAX_PROMPT) @StorableText()
  prompt!: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: ALTERNATE_MAX_PROMPT })
  @Optional() @IsString() @Length(1, ALTERNATE_MAX_PROMPT) @StorableText()
  negativePrompt?: string;

  @ApiPropertyOptional({ description: 'First frame: an HTTPS URL or Base64 (raw or data URL) of a JPEG or PNG up to 10 MiB; makes the task image-to-video' })
  @Optional() @IsString() @Length(1, ALTERNATE_MAX_IMAGE_FIELD)
  image?: string;

  @ApiPropertyOptional({ description: 'End frame, same forms as `image`; makes the task image-to-video' })
  @Optional() @IsString() @Length(1, ALTERNATE_MAX_IMAGE_FIELD)
  imageTail?: string;

  @ApiPropertyOptional({ enum: ALTERNATE_DURATIONS, default: 5, description: 'Seconds' })
  @Optional() @IsIn(ALTERNATE_DURATIONS)
  duration?: 5 | 10;

  @ApiPropertyOptional({ enum: ALTERNATE_ASPECT_RATIOS, default: '16:9', description: 'Text-to-video only; image-to-video takes the ratio of its image' })
  @Optional() @IsIn(ALTERNATE_ASPECT_RATIOS)
  aspectRatio?: AlternateAspectRatio;

  @ApiPropertyOptional({ enum: ALTERNATE_MODES, default: 'std' })
  @Optional() @IsIn(ALTERNATE_MODES)
  mode?: AlternateMode;
}
