import { type CanActivate, type ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { CommonErrorCode, DomainError, Clock, GroupCommit } from '../../../libs/common/index.js';
import { retryOnConnectionError } from '../../database/connection-errors.js';
import { namedQuery } from '../../database/named-query.js';
import { Metrics } from '../../observability/metrics.service.js';
import { parseApiKey } from './api-key-format.js';
import type { ApiKeyStatus, KeyEnvironment } from './api-key.entity.js';
import type { AuthenticatedKey } from './authenticated-key.js';
import { IdentityRepository } from './identity.repository.js';
import type { CachedKey } from './key-cache.js';
import { KeyInvalidations } from './key-invalidations.js';
import { ROUTE_ACCESS, type RouteAccess } from './route-access.js';

const unauthorized = (message: string) => new DomainError(401, CommonErrorCode.Unauthorized, message);

/** How often `last_used_at` is written per key: a hint for people, not an audit trail. */
const TOUCH_INTERVAL_MS = 60_000;
/** Keys whose last touch this process remembers before it forgets those over a minute old. */
const MAX_TOUCH_MEMORY = 10_000;

/**
 * The lookup of every authenticated request, as a named statement on the pg pool under TypeORM:
 * parsed and planned once per connection, no query builder or entity hydration on the hot path
 * (docs/benchmarks.md › Text), on a miss of the key cache. Lookups that arrive while one is in flight go together in the next query (group commit): each
 * request is still answered by a read that started after it arrived.
 */
const KEY_BY_HASH = { name: 'svc_api_key_by_hash', text: 'SELECT id, workspace_id, environment, status FROM api_key WHERE secret_sha256 = $1' };
const KEYS_BY_HASHES = {
  name: 'svc_api_keys_by_hashes',
  text: 'SELECT id, workspace_id, environment, status, secret_sha256 FROM api_key WHERE secret_sha256 = ANY($1::bytea[])',
};
const MAX_LOOKUP_BATCH = 64;

interface KeyRow {
  id: string;
  workspace_id: string;
  environment: KeyEnvironment;
  status: ApiKeyStatus;
}

/**
 * Global guard: every route needs `Authorization: Bearer svc_…` unless marked @Public() or
 * @AdminRoute(). A key is read from the process's key cache while the invalidation channel is
 * subscribed, else from PostgreSQL (docs/decisions.md › Platform, "Key cache with instant
 * revocation"): a revocation reaches every process through the channel before its next request,
 * and a process that cannot hear the channel does not use its cache.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger(ApiKeyGuard.name);
  private readonly lastTouched = new Map<string, number>();
  private readonly touches = new GroupCommit<{ id: string; at: Date }, void>(async (items) => {
    await this.identity.touchApiKeys(items);
    return items.map(() => undefined);
  }, MAX_LOOKUP_BATCH);
  private readonly lookups = new GroupCommit<Buffer, KeyRow | undefined>((hashes) => this.findKeys(hashes), MAX_LOOKUP_BATCH);

  constructor(
    private readonly reflector: Reflector,
    private readonly identity: IdentityRepository,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
    @InjectDataSource() private readonly db: DataSource,
    private readonly invalidations: KeyInvalidations,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    // Only HTTP requests carry a Bearer key: the realtime gateway authenticates each WebSocket
    // with a session ticket in its first frame, so its handlers must not be judged here.
    if (context.getType() !== 'http') return true;
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

    const key = await this.lookUp(parsed.sha256);
    if (!key) throw unauthorized('unknown API key');
    if (key.status !== 'active') throw unauthorized('API key has been revoked');
    this.touch(key.id);
    return { id: key.id, workspaceId: key.workspaceId, environment: key.environment };
  }

  /**
   * The cache while the channel is subscribed, else PostgreSQL. A hit first lets every socket
   * event already read by this turn of the event loop run (setImmediate): an invalidation that
   * reached this process before the request did is applied before the request is answered.
   */
  private async lookUp(sha256: Buffer): Promise<CachedKey | undefined> {
    const cache = this.invalidations.cache;
    if (!cache.enabled) return this.readKey(sha256);
    this.invalidations.start();
    if (!this.invalidations.ready) {
      this.metrics.apiKeyCache.inc({ outcome: 'bypass' });
      return this.readKey(sha256);
    }
    const hash = sha256.toString('hex');
    if (cache.get(hash)) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const key = this.invalidations.ready ? cache.get(hash) : undefined;
      if (key) {
        this.metrics.apiKeyCache.inc({ outcome: 'hit' });
        return key;
      }
    }
    this.metrics.apiKeyCache.inc({ outcome: 'miss' });
    // Read before the lookup: an invalidation that lands while it is in flight drops its write.
    const generation = cache.generation;
    const key = await this.readKey(sha256);
    // Only keys that exist are kept: random keys cost a lookup each, never memory.
    if (key && this.invalidations.ready) cache.set(hash, key, generation);
    return key;
  }

  private async readKey(sha256: Buffer): Promise<CachedKey | undefined> {
    this.metrics.apiKeyLookups.inc();
    // A read: safe to try again when the connection is lost (a killed backend, a failover).
    const row = await retryOnConnectionError(() => this.lookups.submit(sha256));
    return row && { id: row.id, workspaceId: row.workspace_id, environment: row.environment, status: row.status };
  }

  /** Lookups made and requests they answered (calls < items means batches formed). */
  lookupCounters(): { calls: number; items: number; largest: number } {
    return this.lookups.counters();
  }

  /** One query for the batch: the single statement alone, `= ANY` for several. */
  private async findKeys(hashes: Buffer[]): Promise<Array<KeyRow | undefined>> {
    if (hashes.length === 1) return [(await namedQuery<KeyRow>(this.db, KEY_BY_HASH, [hashes[0]]))[0]];
    const rows = await namedQuery<KeyRow & { secret_sha256: Buffer }>(this.db, KEYS_BY_HASHES, [hashes]);
    const byHash = new Map(rows.map((row) => [row.secret_sha256.toString('hex'), row]));
    return hashes.map((hash) => byHash.get(hash.toString('hex')));
  }

  /**
   * `last_used_at` at most once a minute per key and process, never awaited by the request:
   * touches that arrive while one is being written go together in one UPDATE (group commit).
   */
  private touch(keyId: string): void {
    const now = this.clock.now().getTime();
    if (now - (this.lastTouched.get(keyId) ?? -Infinity) < TOUCH_INTERVAL_MS) return;
    if (this.lastTouched.size >= MAX_TOUCH_MEMORY) this.forgetOldTouches(now);
    this.lastTouched.set(keyId, now);
    this.touches.submit({ id: keyId, at: new Date(now) }).catch((error: unknown) => this.logger.warn(`last_used_at not written: ${String(error)}`));
  }

  /** Keys touched more than a minute ago would be written again anyway: their memory can go. */
  private forgetOldTouches(now: number): void {
    for (const [id, at] of this.lastTouched) if (now - at >= TOUCH_INTERVAL_MS) this.lastTouched.delete(id);
  }
}
