import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { AudioTaskStatus } from './audio-task.entity.js';

export class AudioOutputDto {
  @ApiProperty({ format: 'uri', description: 'Signed link, valid until expiresAt (at most one hour); poll the task for a fresh one' })
  url!: string;
  @ApiProperty({ enum: ['audio/mpeg', 'audio/L16;rate=24000;channels=1'] })
  contentType!: string;
  @ApiProperty({ type: 'integer' })
  bytes!: number;
  @ApiProperty({ format: 'date-time', description: "The link's expiry (renewed on every read during the seven-day retention)" })
  expiresAt!: string;
}

export class AudioOutputsDto {
  @ApiProperty({ type: [AudioOutputDto], description: 'Empty while unfinished, after failure, and after retention' })
  audios!: AudioOutputDto[];
}

export class AudioUsageDto {
  @ApiProperty({ type: 'integer', description: 'Characters submitted' })
  inputCharacters!: number;
  @ApiProperty({ type: 'integer', description: 'Characters the upstream billed (0 until known)' })
  billableCharacters!: number;
  @ApiProperty({ description: 'Final charge in USD (0 until settled)' })
  chargedUsd!: number;
}

export class AudioTaskResponseDto {
  @ApiProperty({ pattern: '^audio:[0-9a-f-]{36}$', example: 'audio:2f1c1e9e-0c7e-4f0a-9d55-1b1f7f6f2d11' })
  id!: string;
  @ApiProperty({ enum: ['voice_v3', 'voice_v4', 'voice_v4_turbo'] })
  model!: string;
  @ApiProperty({ enum: ['queued', 'processing', 'succeeded', 'failed', 'cancelled'] })
  status!: AudioTaskStatus;
  @ApiProperty({ type: AudioOutputsDto })
  outputs!: AudioOutputsDto;
  @ApiProperty({ type: AudioUsageDto })
  usage!: AudioUsageDto;
  @ApiPropertyOptional({ enum: ['reconciliationRequired'], description: 'Usage or delivery is being resolved: keep polling, do not resubmit' })
  phase?: 'reconciliationRequired';
  @ApiPropertyOptional({ description: 'Why a failed task failed' })
  failureReason?: string;
  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class AudioTaskPageDto {
  @ApiProperty({ type: [AudioTaskResponseDto] })
  items!: AudioTaskResponseDto[];
  @ApiProperty()
  hasMore!: boolean;
  @ApiProperty({ type: String, nullable: true })
  nextCursor!: string | null;
}

export class AudioEstimateDto {
  @ApiProperty({ enum: ['voice_v3', 'voice_v4', 'voice_v4_turbo'] })
  model!: string;
  @ApiProperty({ enum: ['text_to_speech', 'text_to_dialogue'] })
  mode!: string;
  @ApiProperty({ type: 'integer' })
  inputCharacters!: number;
  @ApiProperty({ type: 'integer', description: 'Expected billable characters (the submitted ones)' })
  billableCharacters!: number;
  @ApiProperty({ description: 'What the task would cost, and the most it can be charged' })
  estimatedUsd!: number;
}

export class AudioModelLimitsDto {
  @ApiProperty({ type: 'integer', description: 'Characters of text per request (prompt, or all dialogue lines)' })
  maxTextCharacters!: number;
  @ApiPropertyOptional({ type: 'integer', description: 'Dialogue entries per request (dialogue models only)' })
  maxDialogueEntries?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'Distinct voices per dialogue (dialogue models only)' })
  maxDialogueVoices?: number;
}

export class AudioModelPriceDto {
  @ApiProperty({ description: 'USD per billable character' })
  perCharacterUsd!: number;
  @ApiProperty({ description: 'USD per 1,000 billable characters' })
  per1000CharactersUsd!: number;
}

export class AudioModelDto {
  @ApiProperty({ enum: ['voice_v3', 'voice_v4', 'voice_v4_turbo'] })
  id!: string;
  @ApiProperty({ enum: ['text_to_speech', 'text_to_dialogue'], isArray: true })
  modes!: string[];
  @ApiProperty({ enum: ['mp3_44100_128', 'pcm_24000'], isArray: true })
  outputFormats!: string[];
  @ApiProperty({ type: AudioModelLimitsDto })
  limits!: AudioModelLimitsDto;
  @ApiProperty({ type: AudioModelPriceDto, description: "Final prices for the calling key's workspace" })
  pricing!: AudioModelPriceDto;
}

export class AudioModelListDto {
  @ApiProperty({ type: [AudioModelDto] })
  models!: AudioModelDto[];
}
