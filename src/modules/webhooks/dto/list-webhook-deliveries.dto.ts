import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsString, Length, Max, Min, ValidateIf } from 'class-validator';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../../../libs/common/index.js';

const Optional = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

export class ListWebhookDeliveriesQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT })
  @Optional() @IsInt() @Min(1) @Max(MAX_PAGE_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @Optional() @IsString() @Length(1, 512)
  after?: string;
}

/** One delivery in the delivery log (DESIGN §4). */
export class WebhookDeliveryResponseDto {
  @ApiProperty({ example: 'delivery:4f0c…' }) id!: string;
  @ApiProperty({ example: 'event:4f0c…', description: 'Equals the x-svc-event-id header and the payload id' }) eventId!: string;
  @ApiProperty({ enum: ['audio.generation.succeeded', 'audio.generation.failed'] }) eventType!: string;
  @ApiProperty({ enum: ['pending', 'succeeded', 'failed'] }) status!: string;
  @ApiProperty({ description: 'Attempts made so far, automatic and manual' }) attempts!: number;
  @ApiProperty({ type: Number, nullable: true }) lastStatusCode!: number | null;
  @ApiProperty({ type: String, nullable: true }) lastError!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'While pending: when the next attempt is due' }) nextAttemptAt!: Date | null;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt!: Date;
  @ApiProperty({ type: String, format: 'date-time' }) updatedAt!: Date;
}

export class WebhookDeliveryPageDto {
  @ApiProperty({ type: [WebhookDeliveryResponseDto] }) items!: WebhookDeliveryResponseDto[];
  @ApiProperty() hasMore!: boolean;
  @ApiProperty({ type: String, nullable: true }) nextCursor!: string | null;
}
