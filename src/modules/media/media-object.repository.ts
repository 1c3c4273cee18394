import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, IsNull } from 'typeorm';
import { MediaObjectEntity } from './media-object.entity.js';

export interface MediaObjectUpsert {
  key: string;
  workspaceId: string | null;
  contentType: string;
  bytes: number;
  expiresAt: Date | null;
  /** A fresh token to use when the object has no live one yet; null: no public link. */
  newPublicToken: string | null;
  now: Date;
}

/** Namespace of the per-key advisory locks (first argument of pg_advisory_xact_lock(int, int)). */
const MEDIA_LOCK_CLASS = 0x6d656469; // "medi"

/** `media_object` rows. A row is live while deleted_at is null and expires_at (if any) is in the future. */
@Injectable()
export class MediaObjectRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Runs `work` in a transaction holding a lock on `key` (across processes), so a store, a
   * delete and the sweeper never interleave on one key: the file and its row change together.
   */
  withKeyLock<T>(key: string, work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MEDIA_LOCK_CLASS, key]);
      return work(tx);
    });
  }

  /**
   * Inserts or replaces the row of `key` (and revives it if it was deleted). A live public
   * token is kept, so retried stores keep minting the same public link.
   */
  async upsert(row: MediaObjectUpsert, tx: EntityManager): Promise<void> {
    await tx.query(
      `INSERT INTO media_object AS m (key, workspace_id, content_type, bytes, public_token, expires_at, created_at, deleted_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
       ON CONFLICT (key) DO UPDATE SET
         workspace_id = EXCLUDED.workspace_id,
         content_type = EXCLUDED.content_type,
         bytes = EXCLUDED.bytes,
         expires_at = EXCLUDED.expires_at,
         created_at = EXCLUDED.created_at,
         public_token = CASE
           WHEN EXCLUDED.public_token IS NULL THEN NULL
           WHEN m.deleted_at IS NULL AND m.public_token IS NOT NULL THEN m.public_token
           ELSE EXCLUDED.public_token END,
         deleted_at = NULL`,
      [row.key, row.workspaceId, row.contentType, row.bytes.toString(), row.newPublicToken, row.expiresAt, row.now],
    );
  }

  /** The row of `key` unless deleted or expired at `now`. */
  findLive(key: string, now: Date, tx: EntityManager = this.db.manager): Promise<MediaObjectEntity | null> {
    return this.live(tx, now).andWhere('m.key = :key', { key }).getOne();
  }

  findLiveByPublicToken(token: string, now: Date): Promise<MediaObjectEntity | null> {
    return this.live(this.db.manager, now).andWhere('m.public_token = :token', { token }).getOne();
  }

  /** The undeleted row of `key` (expired or not), locked for the caller's transaction. */
  findUndeletedForUpdate(key: string, tx: EntityManager): Promise<MediaObjectEntity | null> {
    return tx.getRepository(MediaObjectEntity).findOne({ where: { key, deletedAt: IsNull() }, lock: { mode: 'pessimistic_write' } });
  }

  /** Keys whose retention has ended and which are not deleted yet, in key order after `afterKey`. */
  async findExpiredKeys(now: Date, limit: number, afterKey = ''): Promise<string[]> {
    const rows: Array<{ key: string }> = await this.db.query(
      `SELECT key FROM media_object
       WHERE deleted_at IS NULL AND expires_at <= $1 AND key > $2
       ORDER BY key LIMIT $3`,
      [now, afterKey, limit],
    );
    return rows.map((r) => r.key);
  }

  async markDeleted(key: string, now: Date, tx: EntityManager): Promise<void> {
    await tx.query('UPDATE media_object SET deleted_at = $2 WHERE key = $1 AND deleted_at IS NULL', [key, now]);
  }

  private live(manager: EntityManager, now: Date) {
    return manager
      .createQueryBuilder(MediaObjectEntity, 'm')
      .where('m.deleted_at IS NULL')
      .andWhere('(m.expires_at IS NULL OR m.expires_at > :now)', { now });
  }
}
