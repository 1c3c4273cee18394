import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsObject, IsString, Length, ValidateNested } from 'class-validator';
import { AUDIO_MODEL_IDS, type AudioModelId } from '../../../../libs/providers/index.js';
import { Optional } from '../../../app/dto-fields.js';
import { IsUsdAmount } from '../../../app/usd-amount.validator.js';

/** The most a session may spend (spec › Limits: `maxCostUsd` maximum 10). */
export const REALTIME_MAX_COST_USD = 10;
export const REALTIME_DEFAULT_MAX_COST_USD = 1;

export class RealtimeControlsDto {
  @ApiProperty({ description: 'Official voice id or a saved alias of this key, validated as in audio creation', minLength: 1, maxLength: 128 })
  @IsString() @Length(1, 128)
  voiceId!: string;
}

/** POST /v1/audio/realtime/sessions (spec › Endpoints › Audio 11). Unknown fields answer 400. */
export class CreateRealtimeSessionDto {
  @ApiProperty({ enum: AUDIO_MODEL_IDS })
  @IsIn(AUDIO_MODEL_IDS)
  model!: AudioModelId;

  @ApiProperty({ type: RealtimeControlsDto })
  @IsDefined() @IsObject() @ValidateNested() @Type(() => RealtimeControlsDto)
  controls!: RealtimeControlsDto;

  @ApiPropertyOptional({
    description: 'Cap on the sum of the estimates of the accepted turns, in USD: greater than 0, at most 10, at most 6 decimals (micro-USD; a finer value is refused, never rounded)',
    default: REALTIME_DEFAULT_MAX_COST_USD,
    minimum: 0,
    exclusiveMinimum: true,
    maximum: REALTIME_MAX_COST_USD,
  })
  @Optional() @IsUsdAmount(REALTIME_MAX_COST_USD)
  maxCostUsd?: number;
}
