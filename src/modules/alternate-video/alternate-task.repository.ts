import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, type QueryDeepPartialEntity, Repository } from 'typeorm';
import type { CursorPosition } from '../../../libs/common/index.js';
import { compareAndSet } from '../../database/compare-and-set.js';
import { TaskRowRepository } from '../../database/task-row.repository.js';
import { AlternateTaskEntity, type AlternateTaskPhase, type AlternateTaskStatus } from './alternate-task.entity.js';

export interface AlternateTaskListFilter {
  limit: number;
  after?: CursorPosition;
  status?: AlternateTaskStatus;
  model?: string;
  workspaceId?: string;
}

/** What a task must currently be for a transition to apply (compare-and-set). */
export interface AlternateTransitionGuard {
  status?: readonly AlternateTaskStatus[];
  phase?: ReadonlyArray<AlternateTaskPhase | null>;
  /** Only while no upstream task id is recorded (the first acceptance wins). */
  upstreamIsNull?: boolean;
  /** Only while no upstream task id, or this one, is recorded (a reading of another task changes nothing). */
  upstreamIs?: string;
}

/**
 * Every SQL statement of alternate tasks and of the applied-callback ids. Reads of owned rows
 * take the API key id; every change of a task is a compare-and-set on its current state, so the
 * poller and a callback that see the same upstream result cannot both apply it.
 */
@Injectable()
export class AlternateTaskRepository extends TaskRowRepository<AlternateTaskEntity> {
  constructor(@InjectRepository(AlternateTaskEntity) tasks: Repository<AlternateTaskEntity>, @InjectDataSource() db: DataSource) {
    super(tasks, db);
  }

  /** Newest first, `limit + 1` rows (the extra one says more exist). */
  listOwned(apiKeyId: string, filter: AlternateTaskListFilter): Promise<AlternateTaskEntity[]> {
    return this.list({ ...filter, workspaceId: undefined }, apiKeyId);
  }

  listAll(filter: AlternateTaskListFilter): Promise<AlternateTaskEntity[]> {
    return this.list(filter, undefined);
  }

  private list(filter: AlternateTaskListFilter, apiKeyId: string | undefined): Promise<AlternateTaskEntity[]> {
    const qb = this.tasks.createQueryBuilder('t');
    if (apiKeyId !== undefined) qb.andWhere('t.api_key_id = :apiKeyId', { apiKeyId });
    if (filter.workspaceId !== undefined) qb.andWhere('t.workspace_id = :workspaceId', { workspaceId: filter.workspaceId });
    if (filter.status !== undefined) qb.andWhere('t.status = :status', { status: filter.status });
    if (filter.model !== undefined) qb.andWhere('t.model = :model', { model: filter.model });
    if (filter.after) qb.andWhere('(t.created_at, t.id) < (:afterAt, :afterId)', { afterAt: filter.after.createdAt, afterId: filter.after.id });
    return qb.orderBy('t.created_at', 'DESC').addOrderBy('t.id', 'DESC').limit(filter.limit + 1).getMany();
  }

  /** Ids of every unfinished task (for the work reconciler). */
  async pendingIds(): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM alternate_task WHERE status IN ('queued', 'running') ORDER BY created_at`);
    return rows.map((r) => r.id);
  }

  /** Applies `changes` only when the task is still as `guard` says; true when it did. */
  transition(id: string, guard: AlternateTransitionGuard, changes: QueryDeepPartialEntity<AlternateTaskEntity>): Promise<boolean> {
    const also: Array<{ sql: string; params?: Record<string, unknown> }> = guard.upstreamIsNull ? [{ sql: 'upstream_task_id IS NULL' }] : [];
    if (guard.upstreamIs !== undefined) also.push({ sql: '(upstream_task_id IS NULL OR upstream_task_id = :upstreamIs)', params: { upstreamIs: guard.upstreamIs } });
    return compareAndSet(this.managerOf(), AlternateTaskEntity, id, { status: guard.status, phase: guard.phase, also }, changes);
  }

  /**
   * Records a callback's `webhook-id`; false when it was recorded before (a replay). Recorded
   * only once the callback has been applied, so a failed attempt can be sent again.
   */
  async recordCallback(webhookId: string, taskId: string | null, at: Date): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `INSERT INTO alternate_callback_event (webhook_id, task_id, received_at) VALUES ($1, $2, $3) ON CONFLICT (webhook_id) DO NOTHING RETURNING webhook_id`,
      [webhookId, taskId, at],
    );
    return rows.length > 0;
  }

  async callbackSeen(webhookId: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(`SELECT 1 FROM alternate_callback_event WHERE webhook_id = $1`, [webhookId]);
    return rows.length > 0;
  }

  /** Forgets callback ids older than `before` (their timestamps are long outside the window). */
  async forgetCallbacks(before: Date): Promise<number> {
    const result: [unknown[], number] = await this.db.query(`DELETE FROM alternate_callback_event WHERE received_at < $1`, [before]);
    return Array.isArray(result) ? (result[1] ?? 0) : 0;
  }
}
