import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, type QueryDeepPartialEntity, Repository } from 'typeorm';
import type { CursorPosition } from '../../../libs/common/index.js';
import { compareAndSet } from '../../database/compare-and-set.js';
import { TaskRowRepository } from '../../database/task-row.repository.js';
import { entityManagerOf, type TransactionHandle } from '../../database/transaction.js';
import { AUDIO_PENDING_STATUSES, AudioTaskEntity, type AudioTaskPhase, type AudioTaskStatus } from './audio-task.entity.js';

export interface AudioTaskListFilter {
  limit: number;
  after?: CursorPosition;
  status?: AudioTaskStatus;
  workspaceId?: string;
}

/** What a task must currently be for a transition to apply (compare-and-set). */
export interface AudioTransitionGuard {
  status?: AudioTaskStatus[];
  phase?: Array<AudioTaskPhase | null>;
  /** Only when the task's lease ended at or before this time (a streaming task whose process is gone). */
  leaseExpiredBy?: Date;
}

/**
 * Every SQL statement of audio tasks. Reads of owned rows take the API key id; worker updates are
 * compare-and-set on the task's current state, so a duplicate or stale job cannot move a task twice.
 */
@Injectable()
export class AudioTaskRepository extends TaskRowRepository<AudioTaskEntity> {
  constructor(@InjectRepository(AudioTaskEntity) tasks: Repository<AudioTaskEntity>, @InjectDataSource() db: DataSource) {
    super(tasks, db);
  }

  /**
   * Serialises the creations of one API key until `tx` ends, so that counting its unfinished
   * tasks and inserting one more cannot interleave with another creation (the 429 limit holds).
   */
  async lockCreationsOf(tx: TransactionHandle, apiKeyId: string): Promise<void> {
    await entityManagerOf(tx).query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`audio-pending|${apiKeyId}`]);
  }

  /** Unfinished tasks of the key, counted up to `atMost` only: the check costs the same however many there are. */
  async countPending(tx: TransactionHandle, apiKeyId: string, atMost: number): Promise<number> {
    const rows: Array<{ n: number }> = await entityManagerOf(tx).query(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM audio_task WHERE api_key_id = $1 AND status = ANY($2) LIMIT $3) AS pending`,
      [apiKeyId, AUDIO_PENDING_STATUSES, atMost],
    );
    return rows[0]?.n ?? 0;
  }

  /** Newest first, `limit + 1` rows (the extra one says more exist). */
  listOwned(apiKeyId: string, filter: AudioTaskListFilter): Promise<AudioTaskEntity[]> {
    return this.list({ ...filter, workspaceId: undefined }, apiKeyId);
  }

  listAll(filter: AudioTaskListFilter): Promise<AudioTaskEntity[]> {
    return this.list(filter, undefined);
  }

  private list(filter: AudioTaskListFilter, apiKeyId: string | undefined): Promise<AudioTaskEntity[]> {
    const qb = this.tasks.createQueryBuilder('t');
    if (apiKeyId !== undefined) qb.andWhere('t.api_key_id = :apiKeyId', { apiKeyId });
    if (filter.workspaceId !== undefined) qb.andWhere('t.workspace_id = :workspaceId', { workspaceId: filter.workspaceId });
    if (filter.status !== undefined) qb.andWhere('t.status = :status', { status: filter.status });
    if (filter.after) {
      // The cursor's time has millisecond precision, the column microseconds: compare against the
      // cursor row's own created_at when it exists, so rows sharing that millisecond are not skipped.
      qb.andWhere(
        `(t.created_at, t.id) < (COALESCE((SELECT c.created_at FROM audio_task c WHERE c.id = :afterId), :afterAt), :afterId)`,
        { afterAt: filter.after.createdAt, afterId: filter.after.id },
      );
    }
    return qb.orderBy('t.created_at', 'DESC').addOrderBy('t.id', 'DESC').limit(filter.limit + 1).getMany();
  }

  /** Ids of every unfinished task (for the work reconciler). */
  async pendingIds(): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM audio_task WHERE status = ANY($1) ORDER BY created_at`, [AUDIO_PENDING_STATUSES]);
    return rows.map((r) => r.id);
  }

  /** Applies `changes` only when the task is still as `guard` says; true when it did. */
  transition(id: string, guard: AudioTransitionGuard, changes: QueryDeepPartialEntity<AudioTaskEntity>, tx?: TransactionHandle): Promise<boolean> {
    const also = guard.leaseExpiredBy ? [{ sql: 'lease_expires_at <= :leaseExpiredBy', params: { leaseExpiredBy: guard.leaseExpiredBy } }] : [];
    return compareAndSet(this.managerOf(tx), AudioTaskEntity, id, { status: guard.status, phase: guard.phase, also }, changes);
  }
}
