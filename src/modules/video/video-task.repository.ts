import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, type QueryDeepPartialEntity, Repository } from 'typeorm';
import type { CursorPosition } from '../../../libs/common/index.js';
import { entityManagerOf, inTransaction, type TransactionHandle } from '../../database/transaction.js';
import { VideoGcsPrefixEntity, VideoTaskEntity, type VideoTaskPhase, type VideoTaskStatus } from './video-task.entity.js';

export interface VideoTaskListFilter {
  limit: number;
  after?: CursorPosition;
  status?: VideoTaskStatus;
  model?: string;
  workspaceId?: string;
}

/** What a task must currently be for a transition to apply (compare-and-set). */
export interface TransitionGuard {
  status?: VideoTaskStatus[];
  phase?: Array<VideoTaskPhase | null>;
  operationIsNull?: boolean;
}

/**
 * Every SQL statement of video tasks. Reads of owned rows take the API key id; worker updates
 * are compare-and-set on the task's current state, so a duplicate or stale job cannot move a
 * task twice.
 */
@Injectable()
export class VideoTaskRepository {
  constructor(
    @InjectRepository(VideoTaskEntity) private readonly tasks: Repository<VideoTaskEntity>,
    @InjectRepository(VideoGcsPrefixEntity) private readonly prefixes: Repository<VideoGcsPrefixEntity>,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /** One transaction for the task row and what must commit with it (its hold). */
  transaction<T>(work: (tx: TransactionHandle) => Promise<T>): Promise<T> {
    return inTransaction(this.db, work);
  }

  async insert(tx: TransactionHandle, task: VideoTaskEntity): Promise<void> {
    await entityManagerOf(tx).insert(VideoTaskEntity, task);
  }

  findOwned(apiKeyId: string, id: string): Promise<VideoTaskEntity | null> {
    return this.tasks.findOneBy({ apiKeyId, id });
  }

  /** Worker-side read (the job carries only the task id). */
  findById(id: string): Promise<VideoTaskEntity | null> {
    return this.tasks.findOneBy({ id });
  }

  /** Newest first, `limit + 1` rows (the extra one says more exist). */
  listOwned(apiKeyId: string, filter: VideoTaskListFilter): Promise<VideoTaskEntity[]> {
    return this.list({ ...filter, workspaceId: undefined }, apiKeyId);
  }

  listAll(filter: VideoTaskListFilter): Promise<VideoTaskEntity[]> {
    return this.list(filter, undefined);
  }

  private list(filter: VideoTaskListFilter, apiKeyId: string | undefined): Promise<VideoTaskEntity[]> {
    const qb = this.tasks.createQueryBuilder('t');
    if (apiKeyId !== undefined) qb.andWhere('t.api_key_id = :apiKeyId', { apiKeyId });
    if (filter.workspaceId !== undefined) qb.andWhere('t.workspace_id = :workspaceId', { workspaceId: filter.workspaceId });
    if (filter.status !== undefined) qb.andWhere('t.status = :status', { status: filter.status });
    if (filter.model !== undefined) qb.andWhere('t.model = :model', { model: filter.model });
    if (filter.after) {
      qb.andWhere('(t.created_at, t.id) < (:afterAt, :afterId)', { afterAt: filter.after.createdAt, afterId: filter.after.id });
    }
    return qb.orderBy('t.created_at', 'DESC').addOrderBy('t.id', 'DESC').limit(filter.limit + 1).getMany();
  }

  /** Ids of every unfinished task (for the work reconciler). */
  async pendingIds(): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM video_task WHERE status IN ('queued', 'running') ORDER BY created_at`);
    return rows.map((r) => r.id);
  }

  /** Applies `changes` only when the task is still as `guard` says; true when it did. */
  async transition(id: string, guard: TransitionGuard, changes: QueryDeepPartialEntity<VideoTaskEntity>): Promise<boolean> {
    const qb = this.tasks.createQueryBuilder().update(VideoTaskEntity).set(changes).where('id = :id', { id });
    if (guard.status) qb.andWhere('status IN (:...statuses)', { statuses: guard.status });
    if (guard.phase) {
      const named = guard.phase.filter((p): p is VideoTaskPhase => p !== null);
      const parts = [named.length ? 'phase IN (:...phases)' : null, guard.phase.includes(null) ? 'phase IS NULL' : null].filter(Boolean);
      qb.andWhere(`(${parts.join(' OR ')})`, { phases: named });
    }
    if (guard.operationIsNull) qb.andWhere('upstream_operation IS NULL');
    const result = await qb.execute();
    return (result.affected ?? 0) > 0;
  }

  /** Finished tasks whose media retention has ended and whose media is still stored. */
  findExpiredMedia(now: Date, limit: number): Promise<VideoTaskEntity[]> {
    return this.tasks
      .createQueryBuilder('t')
      .where('t.media_key IS NOT NULL AND t.media_deleted_at IS NULL AND t.expires_at <= :now', { now })
      .orderBy('t.expires_at', 'ASC')
      .limit(limit)
      .getMany();
  }

  async markMediaDeleted(id: string, at: Date): Promise<void> {
    await this.tasks.update({ id }, { mediaDeletedAt: at });
  }

  // gs:// prefixes registered per workspace (rule 4: account-authorized objects).

  async addPrefix(workspaceId: string, prefix: string, at: Date): Promise<VideoGcsPrefixEntity> {
    await this.db.query(
      `INSERT INTO video_gcs_prefix (id, workspace_id, prefix, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id, prefix) DO NOTHING`,
      [randomUUID(), workspaceId, prefix, at],
    );
    return (await this.prefixes.findOneBy({ workspaceId, prefix }))!;
  }

  listPrefixes(workspaceId: string, limit: number, after?: CursorPosition): Promise<VideoGcsPrefixEntity[]> {
    const qb = this.prefixes.createQueryBuilder('p').where('p.workspace_id = :workspaceId', { workspaceId });
    if (after) qb.andWhere('(p.created_at, p.id) < (:afterAt, :afterId)', { afterAt: after.createdAt, afterId: after.id });
    return qb.orderBy('p.created_at', 'DESC').addOrderBy('p.id', 'DESC').limit(limit + 1).getMany();
  }

  async prefixesOf(workspaceId: string): Promise<string[]> {
    return (await this.prefixes.findBy({ workspaceId })).map((p) => p.prefix);
  }
}
