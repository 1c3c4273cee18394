import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ErrorEnvelopeDoc } from '../../app/openapi-errors.js';
import { alternateEnvelope } from './alternate-errors.js';

export class AlternateTaskOutputsDto {
  @ApiProperty({ type: [String], description: 'Fresh signed links to our stored copy of the video; empty until succeeded and after retention' })
  videos!: string[];
  @ApiProperty({ type: [String], maxItems: 0, description: 'Always empty' })
  images!: never[];
  @ApiPropertyOptional({ description: 'Video retention deadline: seven days after completion (succeeded tasks only)' })
  expiresAt?: string;
  @ApiPropertyOptional({ description: 'When the links expire (at most one hour; read the task again for new ones)' })
  urlsExpireAt?: string;
}

export class AlternateTaskUsageDto {
  @ApiProperty({ enum: [5, 10], description: 'Seconds asked for (what the hold covered)' })
  requestedSeconds!: number;
  @ApiPropertyOptional({ description: 'Measured duration of the returned video (succeeded tasks)' })
  outputSeconds?: number;
  @ApiPropertyOptional({ description: 'Seconds charged: the measured duration to 0.1 s, at most the requested duration' })
  billedSeconds?: number;
  @ApiPropertyOptional({ description: 'Final charge in USD (succeeded: the measured price; failed: 0)' })
  chargedUsd?: number;
}

/** An alternate-provider task as the shared `GET /v1/contents/generations/tasks/alt:…` shows it. */
export class AlternateTaskResponseDto {
  @ApiProperty({ example: 'alt:6f1c2a8e-3b9d-4e07-9a51-2c4d8e0f1a23' })
  id!: string;
  @ApiProperty({ example: 'kling-v2-6' })
  model!: string;
  @ApiProperty({ enum: ['queued', 'running', 'succeeded', 'failed'] })
  status!: 'queued' | 'running' | 'succeeded' | 'failed';
  @ApiProperty({ enum: ['std', 'pro'] })
  mode!: 'std' | 'pro';
  @ApiProperty({ enum: ['text_to_video', 'image_to_video'] })
  kind!: 'text_to_video' | 'image_to_video';
  @ApiPropertyOptional({ enum: ['16:9', '9:16', '1:1'], description: 'Text-to-video only' })
  aspectRatio?: string;
  @ApiProperty({ type: AlternateTaskOutputsDto })
  outputs!: AlternateTaskOutputsDto;
  @ApiProperty({ type: AlternateTaskUsageDto })
  usage!: AlternateTaskUsageDto;
  @ApiPropertyOptional({ enum: ['reconciliationRequired'], description: 'The create answer was lost: keep polling, do not resubmit' })
  phase?: 'reconciliationRequired';
  @ApiPropertyOptional({ description: 'Why the task failed (failed tasks only); a fixed sentence, never provider text' })
  failureReason?: string;
  @ApiProperty()
  createdAt!: string;
  @ApiProperty()
  updatedAt!: string;
}

export class AlternateErrorParamsDto {
  @ApiProperty({ example: 'kling' })
  provider!: string;
  @ApiProperty({ example: 429, description: 'The HTTP status of this answer' })
  status!: number;
  @ApiProperty({ example: 1303, description: "The upstream's code; 0 when the upstream was not asked (validation, auth, balance) or gave none. Diagnostic only" })
  upstreamCode!: number;
}

/** The alternate-provider envelope (spec, Errors › Envelopes). */
export class AlternateErrorEnvelopeDto {
  @ApiProperty({ example: 'provider.request_failed' })
  error_code!: string;
  @ApiProperty({ example: 'the video provider is rate or concurrency limited; retry with backoff' })
  error!: string;
  @ApiProperty({ type: AlternateErrorParamsDto })
  error_params!: AlternateErrorParamsDto;
}

/** The alternate routes' errors for OpenAPI (ApiErrors): the envelope the filter writes there. */
export const ALTERNATE_ENVELOPE: ErrorEnvelopeDoc = {
  type: AlternateErrorEnvelopeDto,
  example: (status, code, message) => alternateEnvelope({ status, code, message }),
};

/** What the callback route answers once the signature verifies. */
export class CallbackReceivedDto {
  @ApiProperty({ enum: [true] })
  received!: true;
}
