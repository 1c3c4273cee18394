// First: describes the CLI's request classes for OpenAPI before WorkspaceQueryDto & co. extend them.
import './admin-requests.openapi.js';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Length, Matches } from 'class-validator';
import { WalletResponseDto } from '../billing/index.js';
import type { KeyEnvironment } from '../identity/index.js';
import { KEY_ENVIRONMENTS as ENVIRONMENTS, PageQueryDto } from './admin-requests.dto.js';

// The requests the CLI validates too live apart, free of @nestjs/swagger (docs/decisions.md › CLI boot).
export { CreateWorkspaceDto, CreditWalletDto, IssueApiKeyDto, LedgerQueryDto, PageQueryDto, WalletQueryDto } from './admin-requests.dto.js';

// ---- requests ----

export class WorkspaceQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'Search: a part of the name (case-insensitive) or the whole workspace id' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  q?: string;
}

export class TaskQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'One task kind (`video` today; `alternate`, `audio`, `image` as their domains arrive); every kind when absent' })
  @IsOptional()
  @IsString()
  @Length(1, 50)
  kind?: string;

  @ApiPropertyOptional({ description: "Only tasks in this status (the kind's own status names)" })
  @IsOptional()
  @IsString()
  @Length(1, 50)
  status?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  workspaceId?: string;
}

export class WebhookDeliveryQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['pending', 'succeeded', 'failed'], description: 'Only deliveries in this status' })
  @IsOptional()
  @IsIn(['pending', 'succeeded', 'failed'])
  status?: string;

  @ApiPropertyOptional({ example: 'webhook:4f0c…', description: "Only this endpoint's deliveries" })
  @IsOptional()
  @IsString()
  @Matches(/^webhook:[0-9a-f-]{36}$/, { message: 'endpointId must be an endpoint id (webhook:<uuid>)' })
  endpointId?: string;
}

// ---- responses ----

export class WorkspaceDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'Acme' })
  name!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;
}

export class WorkspaceDetailDto extends WorkspaceDto {
  @ApiProperty({ type: WalletResponseDto, description: 'The live wallet (what `svc_live_` keys spend)' })
  wallet!: WalletResponseDto;
  @ApiProperty({ type: WalletResponseDto, description: 'The test wallet (what `svc_test_` keys spend)' })
  testWallet!: WalletResponseDto;
}

export class ApiKeyDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ format: 'uuid' })
  workspaceId!: string;
  @ApiProperty({ example: 'backend' })
  name!: string;
  @ApiProperty({ example: 'svc_live_AbCd', description: 'The first characters of the key, to tell keys apart' })
  prefix!: string;
  @ApiProperty({ enum: ENVIRONMENTS })
  environment!: KeyEnvironment;
  @ApiProperty({ enum: ['active', 'revoked'] })
  status!: 'active' | 'revoked';
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  revokedAt!: Date | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Updated at most once a minute' })
  lastUsedAt!: Date | null;
}

export class IssuedApiKeyDto extends ApiKeyDto {
  @ApiProperty({ example: 'svc_live_…', description: 'The whole key: shown in this answer only, never again' })
  key!: string;
}

export class LedgerEntryDto {
  @ApiProperty({ example: '1042', description: 'Increasing; a string because it is a 64-bit integer' })
  id!: string;
  @ApiProperty({ enum: ['credit', 'hold', 'capture', 'release', 'adjust'] })
  kind!: string;
  @ApiProperty({ example: 50, description: 'USD, never negative: `kind` says which way the money moved' })
  amountUsd!: number;
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  holdId!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'omni' })
  subjectType!: string | null;
  @ApiProperty({ type: String, nullable: true })
  subjectId!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The credit reference (credits only)' })
  reference!: string | null;
  @ApiProperty({ enum: ENVIRONMENTS })
  environment!: KeyEnvironment;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;
}

export class AdminTaskDto {
  @ApiProperty({ example: 'omni:4f0c…' })
  id!: string;
  @ApiProperty({ example: 'omni' })
  kind!: string;
  @ApiProperty({ format: 'uuid' })
  workspaceId!: string;
  @ApiProperty({ format: 'uuid' })
  apiKeyId!: string;
  @ApiProperty()
  model!: string;
  @ApiProperty()
  status!: string;
  @ApiProperty({ type: String, nullable: true })
  phase!: string | null;
  @ApiProperty({ type: Number, nullable: true })
  chargedUsd!: number | null;
  @ApiProperty({ type: String, nullable: true })
  failureReason!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;
  @ApiProperty({ type: String, format: 'date-time' })
  updatedAt!: Date;
}

abstract class PageDto {
  @ApiProperty()
  hasMore!: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `after` for the next page; null on the last page' })
  nextCursor!: string | null;
}

export class WorkspacePageDto extends PageDto {
  @ApiProperty({ type: [WorkspaceDetailDto] })
  items!: WorkspaceDetailDto[];
}

export class ApiKeyPageDto extends PageDto {
  @ApiProperty({ type: [ApiKeyDto] })
  items!: ApiKeyDto[];
}

export class LedgerPageDto extends PageDto {
  @ApiProperty({ type: [LedgerEntryDto] })
  items!: LedgerEntryDto[];
}

export class AdminTaskPageDto extends PageDto {
  @ApiProperty({ type: [AdminTaskDto] })
  items!: AdminTaskDto[];
}

export class AdminWebhookDeliveryDto {
  @ApiProperty({ example: 'delivery:4f0c…' })
  id!: string;
  @ApiProperty({ example: 'webhook:4f0c…' })
  endpointId!: string;
  @ApiProperty({ format: 'uuid' })
  apiKeyId!: string;
  @ApiProperty({ example: 'event:4f0c…' })
  eventId!: string;
  @ApiProperty({ example: 'audio.generation.succeeded' })
  eventType!: string;
  @ApiProperty({ enum: ['pending', 'succeeded', 'failed'] })
  status!: string;
  @ApiProperty()
  attempts!: number;
  @ApiProperty({ type: Number, nullable: true })
  lastStatusCode!: number | null;
  @ApiProperty({ type: String, nullable: true })
  lastError!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  nextAttemptAt!: Date | null;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;
  @ApiProperty({ type: String, format: 'date-time' })
  updatedAt!: Date;
}

export class AdminWebhookDeliveryPageDto extends PageDto {
  @ApiProperty({ type: [AdminWebhookDeliveryDto] })
  items!: AdminWebhookDeliveryDto[];
}

export class AdminHoldDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ enum: ENVIRONMENTS })
  environment!: KeyEnvironment;
  @ApiProperty({ enum: ['open', 'settled', 'released'] })
  status!: string;
  @ApiProperty({ description: 'USD reserved when the task was accepted' })
  amountUsd!: number;
  @ApiProperty({ description: 'USD charged at settlement (0 while open or when released)' })
  capturedUsd!: number;
  @ApiProperty({ description: 'Measured cost above the hold, not charged' })
  uncollectedUsd!: number;
  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  resolvedAt!: Date | null;
}

export class AdminTaskUsageDto {
  @ApiProperty({ description: 'USD held for the task (sum of its holds)' })
  heldUsd!: number;
  @ApiProperty({ description: 'USD charged (captured)' })
  chargedUsd!: number;
  @ApiProperty({ description: 'Measured USD: charged plus what was above the hold' })
  measuredUsd!: number;
}

export class AdminTaskDetailDto extends AdminTaskDto {
  @ApiProperty({ type: AdminTaskUsageDto, description: "What the task cost, from its holds (the ledger's view)" })
  usage!: AdminTaskUsageDto;
  @ApiProperty({ type: [AdminHoldDto], description: 'The holds made for the task, oldest first' })
  holds!: AdminHoldDto[];
  @ApiProperty({ type: [LedgerEntryDto], description: "The task's ledger entries, newest first (at most 50)" })
  ledger!: LedgerEntryDto[];
}

/** Each count is null when Redis did not answer within 2 s (the overview still answers). */
export class AdminQueueDepthDto {
  @ApiProperty({ example: 'video' })
  name!: string;
  @ApiProperty({ type: Number, nullable: true })
  waiting!: number | null;
  @ApiProperty({ type: Number, nullable: true })
  active!: number | null;
  @ApiProperty({ type: Number, nullable: true })
  delayed!: number | null;
  @ApiProperty({ type: Number, nullable: true })
  prioritized!: number | null;
  @ApiProperty({ type: Number, nullable: true })
  failed!: number | null;
}

export class AdminTaskCountDto {
  @ApiProperty({ example: 'video' })
  kind!: string;
  @ApiProperty({ example: 'succeeded' })
  status!: string;
  @ApiProperty()
  count!: number;
}

export class AdminOverviewDto {
  @ApiProperty({ description: 'Holds not yet settled or released, every workspace and environment' })
  openHolds!: number;
  @ApiProperty({ description: 'USD those holds reserve' })
  heldUsd!: number;
  @ApiProperty({ type: [AdminQueueDepthDto], description: 'Every registered queue' })
  queues!: AdminQueueDepthDto[];
  @ApiProperty({ type: String, format: 'date-time', description: 'Start of the task window (one hour ago)' })
  since!: Date;
  @ApiProperty({ type: [AdminTaskCountDto], description: 'Tasks created since `since`, by kind and status' })
  tasksLastHour!: AdminTaskCountDto[];
  @ApiProperty({ description: 'True when a kind had more tasks in the hour than one overview counts (the counts are then a lower bound)' })
  tasksCapped!: boolean;
  @ApiProperty({ type: [String], example: ['audio', 'image', 'video'], description: 'The task kinds registered (what `kind` of GET /tasks accepts)' })
  taskKinds!: string[];
}

export class QueueDashboardSessionDto {
  @ApiProperty({ example: '/admin/queues', description: 'Where to open the dashboard' })
  path!: string;
  @ApiProperty({ type: String, format: 'date-time', description: 'When the cookie stops being accepted' })
  expiresAt!: Date;
}

export class AdminWebhookDeliveryAttemptDto {
  @ApiProperty({ example: 2, description: 'Numbered from 1 in the order they ran' })
  attempt!: number;
  @ApiProperty({ description: 'True when a person asked for it (a manual retry)' })
  manual!: boolean;
  @ApiProperty({ type: String, format: 'date-time' })
  startedAt!: Date;
  @ApiProperty()
  durationMs!: number;
  @ApiProperty({ type: Number, nullable: true, description: "The receiver's HTTP status; null when no answer came" })
  statusCode!: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why it failed without an answer (timeout, connection refused…)' })
  error!: string | null;
}

export class AdminWebhookDeliveryAttemptPageDto extends PageDto {
  @ApiProperty({ type: [AdminWebhookDeliveryAttemptDto] })
  items!: AdminWebhookDeliveryAttemptDto[];
}
