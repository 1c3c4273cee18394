import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CommonErrorCode, DEFAULT_PAGE_LIMIT, decodeCursor, DomainError, encodeCursor, invalidField, notFound, type Page } from '../../../libs/common/index.js';
import type { FastifyReply } from 'fastify';
import { ApiAdminRefusals, ApiAdminUnauthorized, ApiErrors } from '../../app/openapi-errors.js';
import { AppConfig } from '../../config/app-config.js';
import { QUEUE_DASHBOARD_PATH, QueueDashboardCookie } from '../../queue/queue-dashboard-cookie.js';
import { WalletResponseDto } from '../billing/index.js';
import type { WalletResource } from '../billing/wallet.service.js';
import { AdminRoute } from '../identity/index.js';
import {
  AdminOverviewDto,
  AdminTaskDetailDto,
  AdminTaskPageDto,
  AdminWebhookDeliveryAttemptPageDto,
  AdminWebhookDeliveryDto,
  AdminWebhookDeliveryPageDto,
  ApiKeyDto,
  ApiKeyPageDto,
  CreateWorkspaceDto,
  CreditWalletDto,
  IssueApiKeyDto,
  IssuedApiKeyDto,
  LedgerPageDto,
  LedgerQueryDto,
  PageQueryDto,
  QueueDashboardSessionDto,
  TaskQueryDto,
  WalletQueryDto,
  WebhookDeliveryQueryDto,
  WorkspaceDetailDto,
  WorkspaceDto,
  WorkspacePageDto,
  WorkspaceQueryDto,
  type AdminTaskDto,
  type LedgerEntryDto,
} from './admin.dto.js';
import { AdminOverviewService } from './admin-overview.service.js';
import { AdminTaskListService } from './admin-task-list.service.js';
import { AdminService } from './admin.service.js';
import { type AdminWebhookDeliveryAttempt, AdminWebhookDeliveryDirectory, type AdminWebhookDeliverySummary } from './webhook-delivery-directory.js';

/** Attempt pages are keyed by the attempt number (the cursor's id). */
function attemptCursor(after: string | undefined): number | undefined {
  const position = decodeCursor(after);
  if (!position) return undefined;
  if (!/^[1-9][0-9]{0,8}$/.test(position.id)) throw invalidField('after', 'malformed cursor');
  return Number(position.id);
}

const conflict = (message: string) => new DomainError(409, CommonErrorCode.Conflict, message);

const WORKSPACE_ID = { name: 'id', format: 'uuid', description: 'Workspace id; an unknown or malformed id answers 404 `admin.not_found`' };

@ApiTags('admin')
@AdminRoute()
@ApiAdminUnauthorized()
@Controller('admin/v1')
export class AdminController {
  constructor(
    private readonly admin: AdminService,
    private readonly tasks: AdminTaskListService,
    private readonly webhookDeliveries: AdminWebhookDeliveryDirectory,
    private readonly overviews: AdminOverviewService,
    config: AppConfig,
  ) {
    this.dashboardCookie = new QueueDashboardCookie(config);
  }

  private readonly dashboardCookie: QueueDashboardCookie;

  @Post('workspaces')
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a workspace (empty live and test wallets)' })
  @ApiOkResponse({ type: WorkspaceDto })
  @ApiAdminRefusals()
  createWorkspace(@Body() body: CreateWorkspaceDto): Promise<WorkspaceDto> {
    return this.admin.createWorkspace(body);
  }

  @Get('workspaces')
  @ApiOperation({ summary: 'Workspaces, newest first, with their wallet figures; `q` searches a part of the name or the whole id' })
  @ApiOkResponse({ type: WorkspacePageDto })
  @ApiAdminRefusals()
  listWorkspaces(@Query() query: WorkspaceQueryDto): Promise<Page<WorkspaceDetailDto>> {
    return this.admin.listWorkspaces(query);
  }

  @Get('workspaces/:id')
  @ApiOperation({ summary: 'One workspace with its live and test wallet figures' })
  @ApiParam(WORKSPACE_ID)
  @ApiOkResponse({ type: WorkspaceDetailDto })
  @ApiErrors(404, ['admin.not_found'])
  getWorkspace(@Param('id') id: string): Promise<WorkspaceDetailDto> {
    return this.admin.getWorkspace(id);
  }

  @Post('workspaces/:id/api-keys')
  @HttpCode(200)
  @ApiOperation({ summary: 'Issue an API key; the whole key is in this answer only' })
  @ApiParam(WORKSPACE_ID)
  @ApiOkResponse({ type: IssuedApiKeyDto })
  @ApiErrors(404, ['admin.not_found'])
  @ApiAdminRefusals()
  issueApiKey(@Param('id') id: string, @Body() body: IssueApiKeyDto): Promise<IssuedApiKeyDto> {
    return this.admin.issueApiKey(id, body);
  }

  @Get('workspaces/:id/api-keys')
  @ApiOperation({ summary: "A workspace's keys, newest first, without secrets" })
  @ApiParam(WORKSPACE_ID)
  @ApiOkResponse({ type: ApiKeyPageDto })
  @ApiErrors(404, ['admin.not_found'])
  @ApiAdminRefusals()
  listApiKeys(@Param('id') id: string, @Query() query: PageQueryDto): Promise<Page<ApiKeyDto>> {
    return this.admin.listApiKeys(id, query);
  }

  @Post('api-keys/:keyId/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a key: it answers 401 from the next request on (idempotent)' })
  @ApiParam({ name: 'keyId', format: 'uuid' })
  @ApiOkResponse({ type: ApiKeyDto })
  @ApiErrors(404, ['admin.not_found'])
  @ApiErrors(503, [['admin.unavailable', 'revoked in the database, but Redis did not take the invalidation: retry (idempotent)']])
  revokeApiKey(@Param('keyId') keyId: string): Promise<ApiKeyDto> {
    return this.admin.revokeApiKey(keyId);
  }

  @Post('workspaces/:id/wallet/credits')
  @HttpCode(200)
  @ApiOperation({ summary: 'Top up a wallet, once per reference; answers the wallet after the credit' })
  @ApiParam(WORKSPACE_ID)
  @ApiOkResponse({ type: WalletResponseDto })
  @ApiErrors(404, ['admin.not_found'])
  @ApiErrors(409, [['admin.conflict', 'the reference was used for another amount']])
  @ApiAdminRefusals()
  credit(@Param('id') id: string, @Body() body: CreditWalletDto): Promise<WalletResource> {
    return this.admin.credit(id, body);
  }

  @Get('workspaces/:id/wallet')
  @ApiOperation({ summary: 'Wallet figures of one environment (live by default)' })
  @ApiParam(WORKSPACE_ID)
  @ApiOkResponse({ type: WalletResponseDto })
  @ApiErrors(404, ['admin.not_found'])
  @ApiAdminRefusals()
  wallet(@Param('id') id: string, @Query() query: WalletQueryDto): Promise<WalletResource> {
    return this.admin.wallet(id, query.environment);
  }

  @Get('workspaces/:id/ledger')
  @ApiOperation({ summary: 'Ledger entries, newest first (both environments unless `environment` is given)' })
  @ApiParam(WORKSPACE_ID)
  @ApiOkResponse({ type: LedgerPageDto })
  @ApiErrors(404, ['admin.not_found'])
  @ApiAdminRefusals()
  ledger(@Param('id') id: string, @Query() query: LedgerQueryDto): Promise<Page<LedgerEntryDto>> {
    return this.admin.ledger(id, query);
  }

  @Get('tasks')
  @ApiOperation({ summary: 'Tasks of every kind (video, alternate video, audio, images), newest first' })
  @ApiOkResponse({ type: AdminTaskPageDto })
  @ApiAdminRefusals()
  listTasks(@Query() query: TaskQueryDto): Promise<Page<AdminTaskDto>> {
    return this.tasks.list(query);
  }

  @Get('tasks/:taskId')
  @ApiOperation({ summary: 'One task of any kind with its phase, usage, holds, ledger entries and failure reason' })
  @ApiParam({ name: 'taskId', example: 'omni:4f0c…', description: 'The public task id (`omni:…`, `audio:…`, `image:…`)' })
  @ApiOkResponse({ type: AdminTaskDetailDto })
  @ApiErrors(404, ['admin.not_found'])
  task(@Param('taskId') taskId: string): Promise<AdminTaskDetailDto> {
    return this.tasks.detail(taskId);
  }

  @Get('overview')
  @ApiOperation({ summary: 'Open holds, held USD, queue depths and the last hour of tasks by kind and status' })
  @ApiOkResponse({ type: AdminOverviewDto })
  overview(): Promise<AdminOverviewDto> {
    return this.overviews.overview();
  }

  @Post('queue-dashboard/session')
  @HttpCode(200)
  @ApiOperation({
    summary: 'A short-lived cookie for the queue dashboard (/admin/queues): HttpOnly, SameSite=Strict, Path=/admin/queues, one hour',
    description: 'A browser cannot send the Bearer token on a plain navigation; the console calls this, then opens /admin/queues. See docs/admin-api.md › Queue dashboard.',
  })
  @ApiOkResponse({ type: QueueDashboardSessionDto, headers: { 'set-cookie': { description: '`svc_admin_queues=…; Path=/admin/queues; HttpOnly; SameSite=Strict`', schema: { type: 'string' } } } })
  queueDashboardSession(@Res({ passthrough: true }) reply: FastifyReply): QueueDashboardSessionDto {
    const { header, expiresAt } = this.dashboardCookie.issue();
    void reply.header('set-cookie', header).header('cache-control', 'no-store');
    return { path: QUEUE_DASHBOARD_PATH, expiresAt };
  }

  @Get('webhook-deliveries')
  @ApiOperation({ summary: 'Webhook deliveries across endpoints and keys, newest first' })
  @ApiOkResponse({ type: AdminWebhookDeliveryPageDto })
  @ApiAdminRefusals()
  listWebhookDeliveries(@Query() query: WebhookDeliveryQueryDto): Promise<Page<AdminWebhookDeliverySummary>> {
    return this.webhookDeliveries.list({ status: query.status, endpointId: query.endpointId, after: decodeCursor(query.after), limit: query.limit ?? DEFAULT_PAGE_LIMIT });
  }

  @Get('webhook-deliveries/:deliveryId/attempts')
  @ApiOperation({ summary: "A delivery's attempts, newest first: when, how long, the receiver's status or the error" })
  @ApiParam({ name: 'deliveryId', example: 'delivery:4f0c…' })
  @ApiOkResponse({ type: AdminWebhookDeliveryAttemptPageDto })
  @ApiErrors(404, ['admin.not_found'])
  @ApiAdminRefusals()
  async webhookDeliveryAttempts(@Param('deliveryId') deliveryId: string, @Query() query: PageQueryDto): Promise<Page<AdminWebhookDeliveryAttempt>> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.webhookDeliveries.attempts(deliveryId, limit, attemptCursor(query.after));
    if (!rows) throw notFound('webhook delivery');
    const hasMore = rows.length > limit;
    const items = rows.slice(0, limit);
    return { items, hasMore, nextCursor: hasMore ? encodeCursor({ createdAt: items.at(-1)!.startedAt, id: String(items.at(-1)!.attempt) }) : null };
  }

  @Post('webhook-deliveries/:deliveryId/retry')
  @HttpCode(200)
  @ApiOperation({ summary: 'One new attempt now for a failed delivery (endpoint enabled, event under seven days old), whoever owns it' })
  @ApiParam({ name: 'deliveryId', example: 'delivery:4f0c…' })
  @ApiOkResponse({ type: AdminWebhookDeliveryDto, description: 'The delivery, `pending`: the attempt runs in the background (as the owner\'s own retry answers)' })
  @ApiErrors(404, ['admin.not_found'])
  @ApiErrors(409, [['admin.conflict', 'not failed, endpoint disabled, or event seven days old or more (the message says which)']])
  async retryWebhookDelivery(@Param('deliveryId') deliveryId: string): Promise<AdminWebhookDeliverySummary> {
    const result = await this.webhookDeliveries.retry(deliveryId);
    if (result.outcome === 'not_found') throw notFound('webhook delivery');
    if (result.outcome === 'not_retryable') throw conflict(result.reason);
    return result.delivery;
  }
}
