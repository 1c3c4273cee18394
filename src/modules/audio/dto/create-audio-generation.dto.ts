import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Length,
  MinLength,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { AUDIO_MODEL_IDS, AUDIO_OUTPUT_FORMATS, type AudioMode, type AudioModelId, type AudioOutputFormat } from '../../../../libs/providers/index.js';
import { AUDIO_MAX_DIALOGUE_ENTRIES, AUDIO_MAX_SEED } from '../audio.constants.js';
import { Optional, OptionalNested, TaskPageQueryDto } from '../../../app/dto-fields.js';

export const AUDIO_MODES: readonly AudioMode[] = ['text_to_speech', 'text_to_dialogue'];
export const TEXT_NORMALIZATION = ['auto', 'on', 'off'] as const;

/** A voice as written by the client: an official id or a saved alias (resolved after validation). */
const VOICE_LENGTH = [1, 128] as const;

export class AudioControlsDto {
  @ApiPropertyOptional({ description: 'Official voice id or a saved alias; omitted for dialogue', minLength: 1, maxLength: 128 })
  @Optional() @IsString() @Length(...VOICE_LENGTH)
  voiceId?: string;

  @ApiPropertyOptional({ enum: AUDIO_OUTPUT_FORMATS, default: 'mp3_44100_128' })
  @Optional() @IsIn(AUDIO_OUTPUT_FORMATS)
  outputFormat?: AudioOutputFormat;

  @ApiPropertyOptional({ pattern: '^[a-z]{2,3}$', description: 'Two- or three-letter language code (ISO 639-1 / 639-3)' })
  @Optional() @IsString() @Matches(/^[A-Za-z]{2,3}$/, { message: 'must be a two- or three-letter language code' })
  languageCode?: string;
}

export class AudioVoiceOptionsDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: AUDIO_MAX_SEED })
  @Optional() @IsInt() @Min(0) @Max(AUDIO_MAX_SEED)
  seed?: number;

  @ApiPropertyOptional({ enum: TEXT_NORMALIZATION })
  @Optional() @IsIn(TEXT_NORMALIZATION)
  applyTextNormalization?: (typeof TEXT_NORMALIZATION)[number];
}

export class AudioProviderOptionsDto {
  @OptionalNested(AudioVoiceOptionsDto)
  voice?: AudioVoiceOptionsDto;
}

export class DialogueEntryDto {
  // No maximum here: a line over 2,000 characters is over the request's text limit, which the
  // rules judge for the whole dialogue (400 audio.text_too_long, as for a prompt), not a field rule.
  @ApiProperty({ minLength: 1 })
  @IsString() @MinLength(1)
  text!: string;

  @ApiProperty({ minLength: 1, maxLength: 128 })
  @IsString() @Length(...VOICE_LENGTH)
  voiceId!: string;
}

/** The audio generation request (spec › Audio generation request); cross-field rules are in audio-rules.ts. */
export class CreateAudioGenerationDto {
  @ApiProperty({ enum: AUDIO_MODEL_IDS })
  @IsIn(AUDIO_MODEL_IDS)
  model!: AudioModelId;

  @ApiProperty({ enum: AUDIO_MODES })
  @IsIn(AUDIO_MODES)
  mode!: AudioMode;

  @ApiPropertyOptional({ maxLength: 2000, description: 'Text to speak (speech only), at most 2,000 characters' })
  @Optional() @IsString()
  prompt?: string;

  @OptionalNested(AudioControlsDto)
  controls?: AudioControlsDto;

  @OptionalNested(AudioProviderOptionsDto)
  providerOptions?: AudioProviderOptionsDto;

  @ApiPropertyOptional({ type: [DialogueEntryDto], minItems: 1, maxItems: AUDIO_MAX_DIALOGUE_ENTRIES, description: 'Dialogue only' })
  @Optional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(AUDIO_MAX_DIALOGUE_ENTRIES) @IsObject({ each: true }) @ValidateNested({ each: true }) @Type(() => DialogueEntryDto)
  dialogue?: DialogueEntryDto[];

  @ApiPropertyOptional({ description: 'A webhook endpoint of the same API key' })
  @Optional() @IsString() @Length(1, 200)
  webhookEndpointId?: string;
}

/** The speech stream takes a `text_to_speech` request (DESIGN §4): `mode` may be omitted; dialogue is refused by the use case. */
export class CreateSpeechDto extends CreateAudioGenerationDto {
  @ApiPropertyOptional({ enum: AUDIO_MODES, default: 'text_to_speech', description: 'Absent or `text_to_speech`' })
  @IsIn(AUDIO_MODES)
  override mode: AudioMode = 'text_to_speech';
}

export class ListAudioGenerationsQueryDto extends TaskPageQueryDto {
  @ApiPropertyOptional({ enum: ['queued', 'processing', 'succeeded', 'failed', 'cancelled'] })
  @Optional() @IsIn(['queued', 'processing', 'succeeded', 'failed', 'cancelled'])
  status?: 'queued' | 'processing' | 'succeeded' | 'failed' | 'cancelled';
}
