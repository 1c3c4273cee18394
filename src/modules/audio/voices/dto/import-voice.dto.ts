import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Length, Matches, ValidateIf } from 'class-validator';
import { ALIAS_PATTERN } from '../voice-rules.js';

/** POST /v1/audio/voices/import: save an official voice id as a favourite, optionally under an alias. */
export class ImportVoiceDto {
  @ApiProperty({ description: 'Official voice id (an alias is refused)', example: '21m00Tcm4TlvDq8ikWAM' })
  @IsString() @Length(1, 64)
  voiceId!: string;

  @ApiPropertyOptional({ pattern: ALIAS_PATTERN.source, description: '1–64 of a-z 0-9 _ -, unique per API key; omitted keeps the current alias' })
  @ValidateIf((_object: object, value: unknown) => value !== undefined)
  @IsString()
  @Matches(ALIAS_PATTERN, { message: 'alias must be 1–64 of a-z 0-9 _ -' })
  alias?: string;
}
