import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, type QueryDeepPartialEntity, Repository } from 'typeorm';
import type { CursorPosition } from '../../../libs/common/index.js';
import { entityManagerOf, inTransaction, type TransactionHandle } from '../../database/transaction.js';
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
export class AudioTaskRepository {
  constructor(
    @InjectRepository(AudioTaskEntity) private readonly tasks: Repository<AudioTaskEntity>,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /** One transaction for the task row and what must commit with it (hold, idempotency key, outbox rows). */
  transaction<T>(work: (tx: TransactionHandle) => Promise<T>): Promise<T> {
    return inTransaction(this.db, work);
  }

  async insert(tx: TransactionHandle, task: AudioTaskEntity): Promise<void> {
    await entityManagerOf(tx).insert(AudioTaskEntity, task);
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

  findOwned(apiKeyId: string, id: string): Promise<AudioTaskEntity | null> {
    return this.tasks.findOneBy({ apiKeyId, id });
  }

  /** Worker-side read (the job carries only the task id). */
  findById(id: string, tx?: TransactionHandle): Promise<AudioTaskEntity | null> {
    return tx ? entityManagerOf(tx).findOneBy(AudioTaskEntity, { id }) : this.tasks.findOneBy({ id });
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
  async transition(id: string, guard: AudioTransitionGuard, changes: QueryDeepPartialEntity<AudioTaskEntity>, tx?: TransactionHandle): Promise<boolean> {
    const qb = (tx ? entityManagerOf(tx).createQueryBuilder() : this.tasks.createQueryBuilder()).update(AudioTaskEntity).set(changes).where('id = :id', { id });
    if (guard.status) qb.andWhere('status IN (:...statuses)', { statuses: guard.status });
    if (guard.phase) {
      const named = guard.phase.filter((p): p is AudioTaskPhase => p !== null);
      const parts = [named.length ? 'phase IN (:...phases)' : null, guard.phase.includes(null) ? 'phase IS NULL' : null].filter(Boolean);
      qb.andWhere(`(${parts.join(' OR ')})`, { phases: named });
    }
    if (guard.leaseExpiredBy) qb.andWhere('lease_expires_at <= :leaseExpiredBy', { leaseExpiredBy: guard.leaseExpiredBy });
    const result = await qb.execute();
    return (result.affected ?? 0) > 0;
  }

  /** Finished tasks whose media retention has ended and whose media is still stored. */
  findExpiredMedia(now: Date, limit: number): Promise<AudioTaskEntity[]> {
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
}
