import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsNumber, IsObject, IsString, Max, Min, ValidateIf, ValidateNested } from 'class-validator';
import { IMAGE_ASPECT_RATIOS, IMAGE_MODEL_IDS } from '../../../../libs/providers/index.js';
import { IMAGE_MAX_PROMPT_CHARACTERS, IMAGE_MAX_REFERENCE_BYTES, IMAGE_MAX_REFERENCES, IMAGE_MAX_REFERENCES_TOTAL_BYTES } from '../images.constants.js';

/** Optional, but `null` is not "absent": a field is either omitted or valid. */
const Optional = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** Safety settings forwarded to the upstream; more than this many is not a real request. */
const MAX_SAFETY_SETTINGS = 16;

export class ImageAssetsDto {
  @ApiPropertyOptional({
    type: [String],
    maxItems: IMAGE_MAX_REFERENCES,
    description:
      'Public or signed HTTPS URLs (fetched without redirects, 15 s each) or Base64 data (raw, or as `data:<type>;base64,…` URLs) of PNG, JPEG, WebP, HEIC or HEIF images, ' +
      `told apart by their bytes; raw \`gs://\` is refused. At most ${IMAGE_MAX_REFERENCE_BYTES / 1024 / 1024} MiB each and ${IMAGE_MAX_REFERENCES_TOTAL_BYTES / 1024 / 1024} MiB together (decoded).`,
  })
  @Optional() @IsArray() @ArrayMaxSize(IMAGE_MAX_REFERENCES) @IsString({ each: true })
  referenceImages?: string[];
}

export class ImageControlsDto {
  @ApiPropertyOptional({ enum: ['512', '1K', '2K', '4K'], default: '1K', description: 'pro: 1K, 2K, 4K; flash: 512, 1K, 2K, 4K; lite: 1K' })
  @Optional() @IsString()
  size?: string;

  @ApiPropertyOptional({
    enum: IMAGE_ASPECT_RATIOS,
    description: '9:21 on the pro and flash models only. Unnamed: 1:1 for a new picture; an edit (reference images given) follows the references, as the upstream does',
  })
  @Optional() @IsString()
  aspectRatio?: string;
}

/** Sampling settings only: anything else in generationConfig is an unknown field. */
export class ImageGenerationConfigDto {
  @ApiPropertyOptional({ minimum: 0, maximum: 2 })
  @Optional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(2)
  temperature?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1 })
  @Optional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1)
  topP?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000 })
  @Optional() @IsInt() @Min(1) @Max(1000)
  topK?: number;

  @ApiPropertyOptional({ type: 'integer' })
  @Optional() @IsInt() @Min(-2_147_483_648) @Max(2_147_483_647)
  seed?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 65_536, description: 'Forwarded as is; the upstream counts the image tokens in it too, so a small value can end in image.no_image' })
  @Optional() @IsInt() @Min(1) @Max(65_536)
  maxOutputTokens?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  @Optional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(-2) @Max(2)
  presencePenalty?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  @Optional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(-2) @Max(2)
  frequencyPenalty?: number;

  @ApiPropertyOptional({ type: 'integer', enum: [1], description: 'Fixed at 1: several alternatives need separate calls (another value: 400 `image.unsupported_candidate_count`)' })
  @Optional() @IsInt()
  candidateCount?: number;
}

/**
 * The Gemini API's harm categories and thresholds (upstreams.md §1.6). Checked here so that a
 * setting the upstream would refuse is a 400 before any hold, on the sandbox as on the live
 * adapter; `method` and the `IMAGE_*` / `JAILBREAK` categories are Vertex-only.
 */
export const IMAGE_SAFETY_CATEGORIES = [
  'HARM_CATEGORY_HARASSMENT',
  'HARM_CATEGORY_HATE_SPEECH',
  'HARM_CATEGORY_SEXUALLY_EXPLICIT',
  'HARM_CATEGORY_DANGEROUS_CONTENT',
  'HARM_CATEGORY_CIVIC_INTEGRITY',
] as const;
export const IMAGE_SAFETY_THRESHOLDS = ['HARM_BLOCK_THRESHOLD_UNSPECIFIED', 'BLOCK_LOW_AND_ABOVE', 'BLOCK_MEDIUM_AND_ABOVE', 'BLOCK_ONLY_HIGH', 'BLOCK_NONE', 'OFF'] as const;

export class ImageSafetySettingDto {
  @ApiProperty({ enum: IMAGE_SAFETY_CATEGORIES, example: 'HARM_CATEGORY_HARASSMENT' })
  @IsIn(IMAGE_SAFETY_CATEGORIES, { message: `must be one of ${IMAGE_SAFETY_CATEGORIES.join(', ')}` })
  category!: string;

  @ApiProperty({ enum: IMAGE_SAFETY_THRESHOLDS, example: 'BLOCK_ONLY_HIGH' })
  @IsIn(IMAGE_SAFETY_THRESHOLDS, { message: `must be one of ${IMAGE_SAFETY_THRESHOLDS.join(', ')}` })
  threshold!: string;
}

export class ImageVendorOptionsDto {
  @ApiPropertyOptional({ type: ImageGenerationConfigDto })
  @Optional() @IsObject() @ValidateNested() @Type(() => ImageGenerationConfigDto)
  generationConfig?: ImageGenerationConfigDto;

  @ApiPropertyOptional({ type: [ImageSafetySettingDto], maxItems: MAX_SAFETY_SETTINGS })
  @Optional() @IsArray() @ArrayMaxSize(MAX_SAFETY_SETTINGS) @IsObject({ each: true }) @ValidateNested({ each: true }) @Type(() => ImageSafetySettingDto)
  safetySettings?: ImageSafetySettingDto[];
}

export class ImageProviderOptionsDto {
  @ApiPropertyOptional({ type: ImageVendorOptionsDto })
  @Optional() @IsObject() @ValidateNested() @Type(() => ImageVendorOptionsDto)
  vendor?: ImageVendorOptionsDto;
}

/** The image generation request (spec › Image generation); cross-field rules are in image-rules.ts. */
export class CreateImageGenerationDto {
  @ApiProperty({ enum: IMAGE_MODEL_IDS })
  @IsString()
  model!: string;

  @ApiPropertyOptional({ maxLength: IMAGE_MAX_PROMPT_CHARACTERS, description: 'Required unless a reference image is given; at most 10,000 characters (code points)' })
  @Optional() @IsString()
  prompt?: string;

  @ApiPropertyOptional({ type: ImageAssetsDto })
  @Optional() @IsObject() @ValidateNested() @Type(() => ImageAssetsDto)
  assets?: ImageAssetsDto;

  @ApiPropertyOptional({ type: ImageControlsDto })
  @Optional() @IsObject() @ValidateNested() @Type(() => ImageControlsDto)
  controls?: ImageControlsDto;

  @ApiPropertyOptional({ type: ImageProviderOptionsDto })
  @Optional() @IsObject() @ValidateNested() @Type(() => ImageProviderOptionsDto)
  providerOptions?: ImageProviderOptionsDto;
}
