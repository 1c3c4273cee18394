import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsString, MaxLength } from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '../webhook-events.js';

/**
 * Bounds on what a body may carry before the rules run: the rules then name the precise refusal
 * (webhook-endpoint-rules.ts). 8 entries leave room for a duplicate or an unknown type to be named.
 */
export const MAX_EVENTS_IN_BODY = 8;
const MAX_URL_IN_BODY = 8192;

/** POST /api/svc/v1/webhook-endpoints */
export class CreateWebhookEndpointDto {
  @ApiProperty({ description: 'Absolute HTTPS URL of the receiver (at most 2,048 characters, no user info, a public host)', example: 'https://example.com/hooks/svc' })
  @IsString() @MaxLength(MAX_URL_IN_BODY)
  url!: string;

  @ApiProperty({ description: 'Event types to receive: non-empty, no duplicates', enum: WEBHOOK_EVENT_TYPES, isArray: true })
  @IsArray() @ArrayMaxSize(MAX_EVENTS_IN_BODY) @IsString({ each: true }) @MaxLength(100, { each: true })
  events!: string[];
}
