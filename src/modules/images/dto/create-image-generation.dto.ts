import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsNumber, IsObject, IsString, Length, Matches, Max, Min, ValidateIf, ValidateNested } from 'class-validator';
import { IMAGE_ASPECT_RATIOS, IMAGE_MODEL_IDS } from '../../../../libs/providers/index.js';
import { IMAGE_MAX_REFERENCES } from '../images.constants.js';

/** Optional, but `null` is not "absent": a field is either omitted or valid. */
const Optional = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** Safety settings forwarded to the upstream; more than this many is not a real request. */
const MAX_SAFETY_SETTINGS = 16;

export class ImageAssetsDto {
  @ApiPropertyOptional({ type: [String], maxItems: IMAGE_MAX_REFERENCES, description: 'HTTPS URLs or Base64 `data:` URLs of PNG, JPEG, WebP, HEIC or HEIF images' })
  @Optional() @IsArray() @ArrayMaxSize(IMAGE_MAX_REFERENCES) @IsString({ each: true })
  referenceImages?: string[];
}

export class ImageControlsDto {
  @ApiPropertyOptional({ enum: ['512', '1K', '2K', '4K'], default: '1K', description: 'pro: 1K, 2K, 4K; flash: 512, 1K, 2K, 4K; lite: 1K' })
  @Optional() @IsString()
  size?: string;

  @ApiPropertyOptional({ enum: IMAGE_ASPECT_RATIOS, default: '1:1', description: '9:21 on the pro and flash models only' })
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

  @ApiPropertyOptional({ minimum: 1 })
  @Optional() @IsInt() @Min(1) @Max(1000)
  topK?: number;

  @ApiPropertyOptional({ type: 'integer' })
  @Optional() @IsInt() @Min(-2_147_483_648) @Max(2_147_483_647)
  seed?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'Caps the text the model may say beside the image' })
  @Optional() @IsInt() @Min(1) @Max(65_536)
  maxOutputTokens?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  @Optional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(-2) @Max(2)
  presencePenalty?: number;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  @Optional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(-2) @Max(2)
  frequencyPenalty?: number;

  @ApiPropertyOptional({ enum: [1], description: 'Fixed at 1: several alternatives need separate calls' })
  @Optional() @IsInt()
  candidateCount?: number;
}

export class ImageSafetySettingDto {
  @ApiProperty({ example: 'HARM_CATEGORY_HARASSMENT' })
  @IsString() @Length(1, 64) @Matches(/^HARM_CATEGORY_[A-Z_]+$/, { message: 'must be a HARM_CATEGORY_… name' })
  category!: string;

  @ApiProperty({ example: 'BLOCK_ONLY_HIGH' })
  @IsString() @Length(1, 64) @Matches(/^[A-Z_]+$/, { message: 'must be an upper-case threshold name such as BLOCK_ONLY_HIGH' })
  threshold!: string;

  @ApiPropertyOptional({ example: 'SEVERITY' })
  @Optional() @IsString() @Length(1, 64) @Matches(/^[A-Z_]+$/, { message: 'must be an upper-case method name' })
  method?: string;
}

export class ImageVendorOptionsDto {
  @ApiPropertyOptional({ type: ImageGenerationConfigDto })
  @Optional() @IsObject() @ValidateNested() @Type(() => ImageGenerationConfigDto)
  generationConfig?: ImageGenerationConfigDto;

  @ApiPropertyOptional({ type: [ImageSafetySettingDto], maxItems: MAX_SAFETY_SETTINGS })
  @Optional() @IsArray() @ArrayMaxSize(MAX_SAFETY_SETTINGS) @ValidateNested({ each: true }) @Type(() => ImageSafetySettingDto)
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

  @ApiPropertyOptional({ description: 'Required unless a reference image is given; at most 10,000 characters' })
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
