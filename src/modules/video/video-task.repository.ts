import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, type QueryDeepPartialEntity, Repository } from 'typeorm';
import type { CursorPosition } from '../../../libs/common/index.js';
import { compareAndSet } from '../../database/compare-and-set.js';
import { TaskRowRepository } from '../../database/task-row.repository.js';
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
export class VideoTaskRepository extends TaskRowRepository<VideoTaskEntity> {
  constructor(
    @InjectRepository(VideoTaskEntity) tasks: Repository<VideoTaskEntity>,
    @InjectRepository(VideoGcsPrefixEntity) private readonly prefixes: Repository<VideoGcsPrefixEntity>,
    @InjectDataSource() db: DataSource,
  ) {
    super(tasks, db);
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
  transition(id: string, guard: TransitionGuard, changes: QueryDeepPartialEntity<VideoTaskEntity>): Promise<boolean> {
    const also = guard.operationIsNull ? [{ sql: 'upstream_operation IS NULL' }] : [];
    return compareAndSet(this.managerOf(), VideoTaskEntity, id, { status: guard.status, phase: guard.phase, also }, changes);
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
