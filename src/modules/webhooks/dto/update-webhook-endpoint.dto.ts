import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsString, MaxLength, ValidateIf } from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '../webhook-events.js';
import { MAX_EVENTS_IN_BODY } from './create-webhook-endpoint.dto.js';

/** `null` is not "absent": only a missing field is optional. */
const Optional = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** PATCH /api/svc/v1/webhook-endpoints/{id}: any of the three, at least one. */
export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({ description: 'New receiver URL (same rules as on creation)' })
  @Optional() @IsString() @MaxLength(8192)
  url?: string;

  @ApiPropertyOptional({ enum: WEBHOOK_EVENT_TYPES, isArray: true })
  @Optional() @IsArray() @ArrayMaxSize(MAX_EVENTS_IN_BODY) @IsString({ each: true }) @MaxLength(100, { each: true })
  events?: string[];

  @ApiPropertyOptional({ description: 'false stops deliveries; true resumes them' })
  @Optional() @IsBoolean()
  enabled?: boolean;
}
