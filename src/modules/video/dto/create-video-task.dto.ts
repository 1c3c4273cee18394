import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  Equals,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Length,
  Max,
  Min,
  registerDecorator,
  type ValidationOptions,
} from 'class-validator';
import type { VideoMode, VideoRatio, VideoResolutionName } from '../../../../libs/providers/index.js';
import { ALTERNATE_VIDEO_MODELS, type AlternateVideoModel, VIDEO_MODELS, type VideoModel } from '../../billing/index.js';
import { isStorableText } from '../../../../libs/common/index.js';
import { Optional, OptionalNested, StorableText, TaskPageQueryDto } from '../../../app/dto-fields.js';

export const VIDEO_MODES: readonly VideoMode[] = [
  'text_to_video',
  'image_first_frame',
  'image_first_last_frame',
  'multimodal_reference',
  'video_extend',
  'video_modify',
];
export const VIDEO_RESOLUTIONS: readonly VideoResolutionName[] = ['360p', '720p', '1080p', '4k'];
export const VIDEO_RATIOS: readonly VideoRatio[] = ['16:9', '9:16'];

const GS_URI = /^gs:\/\/[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]\/\S+$/;

/**
 * Rule 4: a public/signed `https://` URL or a `gs://bucket/object` URI; nothing else. (`http://`
 * passes this syntax check only so that the service can accept it where OUTBOUND_ALLOW_HTTP is
 * on — local development and tests; resolveVideoRequest refuses it everywhere else.)
 */
export function isMediaUri(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 4096 || !isStorableText(value)) return false;
  if (value.startsWith('gs://')) return GS_URI.test(value);
  if (!value.startsWith('https://') && !value.startsWith('http://')) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

function IsMediaUri(options?: ValidationOptions) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isMediaUri',
      target: object.constructor,
      propertyName,
      options: { message: 'must be an https:// URL or a gs://bucket/object URI', ...options },
      validator: { validate: isMediaUri },
    });
}

/** What the OpenAPI document says of a media URI; IsMediaUri checks more (host, bucket/object). */
const MEDIA_URI_PATTERN = '^(https://|gs://)';

export class VideoAssetsDto {
  @ApiPropertyOptional({ pattern: MEDIA_URI_PATTERN, example: 'https://example.com/first.png' })
  @Optional() @IsMediaUri()
  firstFrameImage?: string;

  @ApiPropertyOptional({ pattern: MEDIA_URI_PATTERN })
  @Optional() @IsMediaUri()
  lastFrameImage?: string;

  @ApiPropertyOptional({ type: [String], minItems: 1, maxItems: 10, items: { type: 'string', pattern: MEDIA_URI_PATTERN } })
  @Optional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(10) @IsMediaUri({ each: true })
  referenceImages?: string[];

  @ApiPropertyOptional({ pattern: MEDIA_URI_PATTERN })
  @Optional() @IsMediaUri()
  sourceVideo?: string;

  @ApiPropertyOptional({ type: [String], minItems: 1, maxItems: 3, items: { type: 'string', pattern: MEDIA_URI_PATTERN } })
  @Optional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(3) @IsMediaUri({ each: true })
  referenceVideos?: string[];
}

export class VideoControlsDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 3, maximum: 10, default: 5 })
  @Optional() @IsInt() @Min(3) @Max(10)
  duration?: number;

  @ApiPropertyOptional({ enum: VIDEO_RESOLUTIONS, default: '720p' })
  @Optional() @IsIn(VIDEO_RESOLUTIONS)
  resolution?: VideoResolutionName;

  @ApiPropertyOptional({ enum: VIDEO_RATIOS, default: '16:9' })
  @Optional() @IsIn(VIDEO_RATIOS)
  ratio?: VideoRatio;

  @ApiPropertyOptional({ enum: [true], default: true })
  @Optional() @IsBoolean() @Equals(true, { message: 'must be true (every video has native audio)' })
  generateAudio?: boolean;

  @ApiPropertyOptional({ type: 'integer', enum: [1], default: 1 })
  @Optional() @IsInt() @Equals(1, { message: 'must be 1 (one video per task)' })
  outputCount?: number;
}

/** `providerOptions.vendor` is accepted but has no allowed properties: `{}` only. */
function IsEmptyObject() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isEmptyObject',
      target: object.constructor,
      propertyName,
      options: { message: 'must be an empty object (no vendor options are supported for video)' },
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0,
      },
    });
}

export class VideoProviderOptionsDto {
  @ApiPropertyOptional({ type: Object, maxProperties: 0, description: 'Accepted, but must be an empty object' })
  @Optional() @IsEmptyObject()
  vendor?: Record<string, never>;
}

export class CreateVideoTaskDto {
  @ApiProperty({ enum: VIDEO_MODELS })
  @IsIn(VIDEO_MODELS)
  model!: VideoModel;

  @ApiProperty({ minLength: 1, maxLength: 10_000 })
  @IsString() @Length(1, 10_000) @StorableText()
  prompt!: string;

  @ApiPropertyOptional({ enum: VIDEO_MODES, description: 'Inferred from assets when omitted; video_extend must be set explicitly' })
  @Optional() @IsIn(VIDEO_MODES)
  mode?: VideoMode;

  @OptionalNested(VideoAssetsDto)
  assets?: VideoAssetsDto;

  @OptionalNested(VideoControlsDto)
  controls?: VideoControlsDto;

  @OptionalNested(VideoProviderOptionsDto)
  providerOptions?: VideoProviderOptionsDto;
}

export class ListVideoTasksQueryDto extends TaskPageQueryDto {
  @ApiPropertyOptional({ enum: ['queued', 'running', 'succeeded', 'failed'] })
  @Optional() @IsIn(['queued', 'running', 'succeeded', 'failed'])
  status?: 'queued' | 'running' | 'succeeded' | 'failed';

  /** Alternate-provider models list the `alt:` tasks of the shared endpoint. */
  @ApiPropertyOptional({ enum: [...VIDEO_MODELS, ...ALTERNATE_VIDEO_MODELS] })
  @Optional() @IsIn([...VIDEO_MODELS, ...ALTERNATE_VIDEO_MODELS])
  model?: VideoModel | AlternateVideoModel;
}
