import { Injectable } from '@nestjs/common';
import {
  type CursorPosition,
  DEFAULT_PAGE_LIMIT,
  decodeCursor,
  invalidField,
  isUuid,
  microsToUsd,
  notFound,
  type Page,
  toPage,
  usdToMicros,
} from '../../../libs/common/index.js';
import { type LedgerEntry, WalletService, type WalletResource } from '../billing/wallet.service.js';
import type { KeyEnvironment } from '../identity/index.js';
import { type ApiKey, IdentityService, type Workspace } from '../identity/identity.service.js';
import type {
  ApiKeyDto,
  CreateWorkspaceDto,
  CreditWalletDto,
  IssueApiKeyDto,
  IssuedApiKeyDto,
  LedgerEntryDto,
  LedgerQueryDto,
  PageQueryDto,
  WorkspaceDetailDto,
  WorkspaceDto,
  WorkspaceQueryDto,
} from './admin.dto.js';

// What the service's callers validate their input with; the CLI takes them from here (module boundaries).
export { CreateWorkspaceDto, CreditWalletDto, IssueApiKeyDto, LedgerQueryDto, PageQueryDto, WalletQueryDto } from './admin-requests.dto.js';

/**
 * What operators do: workspaces, keys, top-ups, balances and the ledger. The admin controller
 * and the CLI both call this class, so they answer the same shapes and enforce the same rules.
 * Ids are checked for UUID shape before any query: an unknown or malformed id is a 404.
 */
@Injectable()
export class AdminService {
  constructor(
    private readonly identity: IdentityService,
    private readonly wallets: WalletService,
  ) {}

  async createWorkspace(dto: CreateWorkspaceDto): Promise<WorkspaceDto> {
    return toWorkspace(await this.identity.createWorkspace(dto.name));
  }

  async listWorkspaces(query: WorkspaceQueryDto): Promise<Page<WorkspaceDetailDto>> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const search = query.q?.trim() || undefined;
    const rows = await this.identity.listWorkspaces(limit, uuidCursor(query.after), search);
    const page = toPage(rows, limit, (row) => row);
    const figures = await this.wallets.figuresOf(page.items.map((w) => w.id));
    return { ...page, items: page.items.map((w) => ({ ...toWorkspace(w), wallet: figures.get(w.id)!.live, testWallet: figures.get(w.id)!.test })) };
  }

  async getWorkspace(id: string): Promise<WorkspaceDetailDto> {
    const workspace = await this.workspace(id);
    const [wallet, testWallet] = await Promise.all([this.wallets.figures(workspace.id, 'live'), this.wallets.figures(workspace.id, 'test')]);
    return { ...toWorkspace(workspace), wallet, testWallet };
  }

  async issueApiKey(workspaceId: string, dto: IssueApiKeyDto): Promise<IssuedApiKeyDto> {
    const workspace = await this.workspace(workspaceId);
    const { apiKey, key } = await this.identity.issueApiKey(workspace.id, dto.name, dto.environment ?? 'live');
    return { ...toApiKey(apiKey), key };
  }

  async listApiKeys(workspaceId: string, query: PageQueryDto): Promise<Page<ApiKeyDto>> {
    const workspace = await this.workspace(workspaceId);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.identity.listApiKeys(workspace.id, limit, uuidCursor(query.after));
    return toPage(rows, limit, toApiKey);
  }

  /** Idempotent: a revoked key stays revoked with its first revocation time. */
  async revokeApiKey(keyId: string): Promise<ApiKeyDto> {
    const id = normalizeUuid(keyId);
    if (!id) throw notFound('API key');
    return toApiKey(await this.identity.revokeApiKey(id));
  }

  /** A repeated reference with the same amount changes nothing; with another amount it is a 409. */
  async credit(workspaceId: string, dto: CreditWalletDto): Promise<WalletResource> {
    const workspace = await this.workspace(workspaceId);
    const environment = dto.environment ?? 'live';
    await this.wallets.credit(workspace.id, environment, usdToMicros(dto.amountUsd), dto.reference);
    return this.wallets.figures(workspace.id, environment);
  }

  async wallet(workspaceId: string, environment: KeyEnvironment = 'live'): Promise<WalletResource> {
    const workspace = await this.workspace(workspaceId);
    return this.wallets.figures(workspace.id, environment);
  }

  /** Newest first; paged by the entry id (a bigint that only grows). */
  async ledger(workspaceId: string, query: LedgerQueryDto): Promise<Page<LedgerEntryDto>> {
    const workspace = await this.workspace(workspaceId);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.wallets.listLedger(workspace.id, limit, ledgerCursor(query.after), {
      environment: query.environment,
      kind: query.kind,
      subjectId: query.subjectId,
      subjectType: query.subjectType,
    });
    return toPage(
      rows.map((row) => ({ row, createdAt: row.createdAt, id: row.id.toString() })),
      limit,
      ({ row }) => toLedgerEntry(row),
    );
  }

  private async workspace(id: string): Promise<Workspace> {
    const uuid = normalizeUuid(id);
    if (!uuid) throw notFound('workspace');
    return this.identity.getWorkspace(uuid);
  }
}

/** The lowercase UUID, or null when `value` is not one (so Postgres never sees a bad uuid). */
function normalizeUuid(value: string): string | null {
  const lower = value.toLowerCase();
  return isUuid(lower) ? lower : null;
}

/** Cursors of workspace and key lists carry a UUID; anything else was not minted by us. */
function uuidCursor(after: string | undefined): CursorPosition | undefined {
  const position = decodeCursor(after);
  if (position && !isUuid(position.id)) throw invalidField('after', 'malformed cursor');
  return position;
}

function ledgerCursor(after: string | undefined): bigint | undefined {
  const position = decodeCursor(after);
  if (!position) return undefined;
  if (!/^[1-9][0-9]{0,18}$/.test(position.id)) throw invalidField('after', 'malformed cursor');
  return BigInt(position.id);
}

export function toWorkspace(row: Workspace): WorkspaceDto {
  return { id: row.id, name: row.name, createdAt: row.createdAt };
}

export function toApiKey(row: ApiKey): ApiKeyDto {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    prefix: row.prefix,
    environment: row.environment,
    status: row.status,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
    lastUsedAt: row.lastUsedAt,
  };
}

export function toLedgerEntry(row: LedgerEntry): LedgerEntryDto {
  return {
    id: row.id.toString(),
    kind: row.kind,
    amountUsd: microsToUsd(row.amountMicros),
    holdId: row.holdId,
    subjectType: row.subjectType,
    subjectId: row.subjectId,
    reference: row.reference,
    environment: row.environment,
    createdAt: row.createdAt,
  };
}
