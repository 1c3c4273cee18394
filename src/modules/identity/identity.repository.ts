import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager, type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';
import { type CursorPosition } from '../../../libs/common/index.js';
import { ApiKeyEntity, type KeyEnvironment } from './api-key.entity.js';
import { WorkspaceEntity } from './workspace.entity.js';

/** Storage of workspaces and API keys. */
/**
 * Keyset paging after a cursor on (created_at, id), newest first. The cursor's time is a JS Date
 * (milliseconds) while these rows' created_at (a database default) has microseconds: compare with
 * the cursor row's own created_at, else rows sharing its millisecond are skipped.
 */
function afterCursor<T extends ObjectLiteral>(query: SelectQueryBuilder<T>, alias: string, table: string, after?: CursorPosition): SelectQueryBuilder<T> {
  if (!after) return query;
  return query.andWhere(`(${alias}.created_at, ${alias}.id) < (COALESCE((SELECT c.created_at FROM ${table} c WHERE c.id = :id), :createdAt), :id)`, {
    createdAt: after.createdAt,
    id: after.id,
  });
}

@Injectable()
export class IdentityRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async createWorkspace(name: string, manager: EntityManager = this.db.manager): Promise<WorkspaceEntity> {
    const row = manager.create(WorkspaceEntity, { id: randomUUID(), name });
    return manager.save(row);
  }

  findWorkspace(id: string): Promise<WorkspaceEntity | null> {
    return this.db.manager.findOneBy(WorkspaceEntity, { id });
  }

  /** Newest first; `limit + 1` rows so the caller can tell whether more exist. */
  /** `search`: a part of the name (case-insensitive, `%` and `_` taken literally) or the whole id. */
  listWorkspaces(limit: number, after?: CursorPosition, search?: string): Promise<WorkspaceEntity[]> {
    const query = this.db.manager
      .createQueryBuilder(WorkspaceEntity, 'w')
      .orderBy('w.created_at', 'DESC')
      .addOrderBy('w.id', 'DESC')
      .limit(limit + 1);
    if (search !== undefined) {
      const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query.andWhere("(w.name ILIKE :pattern ESCAPE '\\' OR w.id::text = lower(:search))", { pattern, search });
    }
    return afterCursor(query, 'w', 'workspace', after).getMany();
  }

  async createApiKey(
    input: { workspaceId: string; name: string; environment: KeyEnvironment; prefix: string; secretSha256: Buffer },
    manager: EntityManager = this.db.manager,
  ): Promise<ApiKeyEntity> {
    const row = manager.create(ApiKeyEntity, { id: randomUUID(), status: 'active', revokedAt: null, lastUsedAt: null, ...input });
    return manager.save(row);
  }

  findApiKey(id: string): Promise<ApiKeyEntity | null> {
    return this.db.manager.findOneBy(ApiKeyEntity, { id });
  }

  listApiKeys(workspaceId: string, limit: number, after?: CursorPosition): Promise<ApiKeyEntity[]> {
    const query = this.db.manager
      .createQueryBuilder(ApiKeyEntity, 'k')
      .where('k.workspace_id = :workspaceId', { workspaceId })
      .orderBy('k.created_at', 'DESC')
      .addOrderBy('k.id', 'DESC')
      .limit(limit + 1);
    return afterCursor(query, 'k', 'api_key', after).getMany();
  }

  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  async revokeApiKey(id: string): Promise<ApiKeyEntity | null> {
    await this.db.query(`UPDATE api_key SET status = 'revoked', revoked_at = now() WHERE id = $1 AND status = 'active'`, [id]);
    return this.findApiKey(id);
  }

  /** Best effort, throttled and batched by the caller: never on the request's critical path. */
  async touchApiKeys(touches: ReadonlyArray<{ id: string; at: Date }>): Promise<void> {
    await this.db.query(
      `UPDATE api_key k SET last_used_at = GREATEST(k.last_used_at, t.at)
         FROM (SELECT DISTINCT ON (id) id, at FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, at) ORDER BY id, at DESC) t
        WHERE k.id = t.id`,
      [touches.map((t) => t.id), touches.map((t) => t.at)],
    );
  }

  countWorkspaces(): Promise<number> {
    return this.db.manager.count(WorkspaceEntity);
  }
}
