import { type CanActivate, type ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { CommonErrorCode, DomainError, Clock } from '../../../libs/common/index.js';
import { Metrics } from '../health/metrics.service.js';
import { parseApiKey } from './api-key-format.js';
import type { KeyEnvironment } from './api-key.entity.js';
import type { AuthenticatedKey } from './authenticated-key.js';
import { IdentityRepository } from './identity.repository.js';
import { ROUTE_ACCESS, type RouteAccess } from './route-access.js';

const unauthorized = (message: string) => new DomainError(401, CommonErrorCode.Unauthorized, message);

/** How often `last_used_at` is written per key: a hint for people, not an audit trail. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * The lookup of every authenticated request, as a named statement on the pg pool under TypeORM:
 * parsed and planned once per connection, no query builder or entity hydration on the hot path
 * (docs/benchmarks.md › Text: about a quarter of a millisecond of CPU per request). Still one
 * query per request: nothing is cached, so a revoked key is refused on the next request.
 */
const KEY_BY_HASH = { name: 'svc_api_key_by_hash', text: 'SELECT id, workspace_id, environment, status FROM api_key WHERE secret_sha256 = $1' };

interface KeyRow {
  id: string;
  workspace_id: string;
  environment: KeyEnvironment;
  status: string;
}
interface NamedQueryPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: KeyRow[] }>;
}

/**
 * Global guard: every route needs `Authorization: Bearer svc_…` unless marked @Public() or
 * @AdminRoute(). Keys are looked up on every request (no cache), so a revoked key is refused
 * at once on every instance.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger(ApiKeyGuard.name);
  private readonly lastTouched = new Map<string, number>();

  constructor(
    private readonly reflector: Reflector,
    private readonly identity: IdentityRepository,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(ROUTE_ACCESS, [context.getHandler(), context.getClass()]);
    if (access === 'public' || access === 'admin') return true;

    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; apiKey?: AuthenticatedKey }>();
    request.apiKey = await this.authenticate(request.headers.authorization);
    return true;
  }

  async authenticate(header: string | undefined): Promise<AuthenticatedKey> {
    if (!header) throw unauthorized('missing Authorization header: send "Authorization: Bearer <API key>"');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized('Authorization header must be "Bearer <API key>"');
    const parsed = parseApiKey(match[1]!);
    if (!parsed.ok) throw unauthorized(parsed.reason);

    this.metrics.apiKeyLookups.inc();
    const key = await this.findKey(parsed.sha256);
    if (!key) throw unauthorized('unknown API key');
    if (key.status !== 'active') throw unauthorized('API key has been revoked');
    this.touch(key.id);
    return { id: key.id, workspaceId: key.workspace_id, environment: key.environment };
  }

  private async findKey(sha256: Buffer): Promise<KeyRow | undefined> {
    const pool = (this.db.driver as unknown as { master?: Partial<NamedQueryPool> }).master;
    if (typeof pool?.query === 'function') return (await (pool as NamedQueryPool).query({ ...KEY_BY_HASH, values: [sha256] })).rows[0];
    const rows: KeyRow[] = await this.db.query(KEY_BY_HASH.text, [sha256]);
    return rows[0];
  }

  private touch(keyId: string): void {
    const now = this.clock.now().getTime();
    if (now - (this.lastTouched.get(keyId) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(keyId, now);
    this.identity.touchApiKey(keyId, new Date(now)).catch((error: unknown) => this.logger.warn(`last_used_at not written: ${String(error)}`));
  }
}
