import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, type QueryDeepPartialEntity, Repository } from 'typeorm';
import type { CursorPosition } from '../../../libs/common/index.js';
import { compareAndSet } from '../../database/compare-and-set.js';
import { TaskRowRepository } from '../../database/task-row.repository.js';
import { type NamedStatement, namedQueryIn } from '../../database/named-query.js';
import type { TransactionHandle } from '../../database/transaction.js';
import type { IdempotencyScope } from './audio-idempotency.repository.js';
import { AUDIO_PENDING_STATUSES, AudioTaskEntity, type AudioTaskPhase, type AudioTaskStatus } from './audio-task.entity.js';

export interface AudioTaskListFilter {
  limit: number;
  after?: CursorPosition;
  status?: AudioTaskStatus;
  workspaceId?: string;
}

/** An idempotency record as a creation needs it: the request it decided and its task. */
export interface DecidedRequest {
  requestHash: string;
  taskId: string;
}

/** The scopes as three text arrays (null where a creation has none). */
function scopeColumns(scopes: Array<IdempotencyScope | undefined>): [Array<string | null>, Array<string | null>, Array<string | null>] {
  return [scopes.map((s) => s?.apiKeyId ?? null), scopes.map((s) => s?.endpoint ?? null), scopes.map((s) => s?.key ?? null)];
}

/** Rows that carry a 1-based `i` (WITH ORDINALITY), placed at their index; `missing` elsewhere. */
function byIndex<R extends { i: number }, T>(count: number, rows: R[], map: (row: R) => T, missing?: T): T[] {
  const out = new Array<T>(count).fill(missing as T);
  for (const row of rows) out[Number(row.i) - 1] = map(row);
  return out;
}

/**
 * The statements of every audio creation (TaskCreations), named: prepared once per connection
 * (namedQueryIn). What each does is told at the method that runs it.
 */
const LOCK_CREATIONS_OF: NamedStatement = { name: 'audio_lock_creations_of', text: `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))` };
const COUNT_PENDING: NamedStatement = { name: 'audio_count_pending', text: `SELECT coalesce(sum(pending), 0)::int AS pending FROM audio_pending_count WHERE api_key_id = $1` };
const LOCK_CREATION_BATCH: NamedStatement = {
  name: 'audio_lock_creation_batch',
  text: `SELECT
     (SELECT count(*) FROM (SELECT pg_advisory_xact_lock(hashtextextended('audio-pending|' || k, 0)) FROM unnest($4::text[]) AS k) AS locked) AS locked,
     (SELECT coalesce(json_agg(json_build_object('i', u.i, 'claimed', pg_try_advisory_xact_lock(hashtextextended('audio-idempotency|' || u.api_key_id || '|' || u.endpoint || '|' || u.key, 0)))), '[]'::json)
        FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u (api_key_id, endpoint, key, i)
        WHERE u.key IS NOT NULL) AS claims`,
};
const CREATION_BATCH_STATE: NamedStatement = {
  name: 'audio_creation_batch_state',
  text: `SELECT
     (SELECT coalesce(json_agg(json_build_object('i', u.i, 'requestHash', r.request_hash, 'taskId', r.task_id)), '[]'::json)
        FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u (api_key_id, endpoint, key, i)
        JOIN audio_idempotency r ON r.api_key_id = u.api_key_id::uuid AND r.endpoint = u.endpoint AND r.key = u.key) AS decided,
     (SELECT coalesce(json_agg(json_build_object('apiKeyId', c.api_key_id, 'n', c.pending)), '[]'::json)
        FROM (SELECT api_key_id, sum(pending) AS pending FROM audio_pending_count WHERE api_key_id = ANY($4::uuid[]) GROUP BY api_key_id) AS c) AS pending`,
};

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
    await namedQueryIn(tx, LOCK_CREATIONS_OF, [`audio-pending|${apiKeyId}`]);
  }

  /**
   * Unfinished tasks of the key: the sum of its (at most 16) rows of `audio_pending_count`, which
   * triggers on `audio_task` keep (migration AudioPendingCount), so the check costs the same
   * however many there are.
   */
  async countPending(tx: TransactionHandle, apiKeyId: string): Promise<number> {
    const rows = await namedQueryIn<{ pending: number }>(tx, COUNT_PENDING, [apiKeyId]);
    return rows[0]?.pending ?? 0;
  }

  /**
   * The locks of a batch of creations (TaskCreations), in one statement: each distinct API key's
   * creation lock (`lockCreationsOf`, taken in key order so two batches never wait on each
   * other), then per creation with an idempotency scope the scope's claim
   * (`AudioIdempotencyRepository.tryClaim`, the same lock): true where this batch holds it,
   * false where another request does (always true without a scope).
   */
  async lockCreationBatch(tx: TransactionHandle, scopes: Array<IdempotencyScope | undefined>, apiKeyIds: string[]): Promise<boolean[]> {
    const rows = await namedQueryIn<{ claims: Array<{ i: number; claimed: boolean }> }>(tx, LOCK_CREATION_BATCH, [...scopeColumns(scopes), [...new Set(apiKeyIds)].sort()]);
    return byIndex(scopes.length, rows[0]!.claims, (row) => row.claimed === true, true);
  }

  /**
   * What a batch of creations reads once its locks are held (one statement, so a snapshot taken
   * after them): the records decided for the scopes, and each API key's unfinished tasks
   * (`countPending`). The records are complete: only a transaction holding the creation lock of
   * the scope's API key writes one, and it holds that lock until it commits, so every record
   * this batch could ever see is committed by now. That is why the batch reads them once, here,
   * and not before its claims as `writeOne` does (a read in the locking statement would have
   * that statement's snapshot, taken before it waited for the locks).
   */
  async creationBatchState(
    tx: TransactionHandle,
    scopes: Array<IdempotencyScope | undefined>,
    apiKeyIds: string[],
  ): Promise<{ decided: Array<DecidedRequest | null>; pending: Map<string, number> }> {
    const rows = await namedQueryIn<{ decided: Array<{ i: number; requestHash: string; taskId: string }>; pending: Array<{ apiKeyId: string; n: number }> }>(
      tx,
      CREATION_BATCH_STATE,
      [...scopeColumns(scopes), [...new Set(apiKeyIds)]],
    );
    const { decided, pending } = rows[0]!;
    return {
      decided: byIndex(scopes.length, decided, (row) => ({ requestHash: row.requestHash, taskId: row.taskId }), null),
      pending: new Map(pending.map((row) => [row.apiKeyId, Number(row.n)])),
    };
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
