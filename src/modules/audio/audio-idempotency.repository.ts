import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { insertRows } from '../../database/bulk-insert.js';
import { entityManagerOf, type TransactionHandle } from '../../database/transaction.js';
import type { AudioEndpoint } from './audio.constants.js';
import { AudioIdempotencyEntity } from './audio-task.entity.js';

export interface IdempotencyScope {
  apiKeyId: string;
  endpoint: AudioEndpoint;
  key: string;
}

/** The `audio_idempotency` table: one row per (API key, endpoint, key), written with its task. */
@Injectable()
export class AudioIdempotencyRepository {
  constructor(@InjectRepository(AudioIdempotencyEntity) private readonly records: Repository<AudioIdempotencyEntity>) {}

  /**
   * Claims the scope until `tx` ends, without waiting: false means another request with the same
   * key is being decided right now (answered 409 `audio.request_in_progress`, never a blocked request).
   */
  async tryClaim(tx: TransactionHandle, scope: IdempotencyScope): Promise<boolean> {
    const rows: Array<{ claimed: boolean }> = await entityManagerOf(tx).query(
      `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS claimed`,
      [`audio-idempotency|${scope.apiKeyId}|${scope.endpoint}|${scope.key}`],
    );
    return rows[0]?.claimed === true;
  }

  find(scope: IdempotencyScope, tx?: TransactionHandle): Promise<AudioIdempotencyEntity | null> {
    const where = { apiKeyId: scope.apiKeyId, endpoint: scope.endpoint, key: scope.key };
    return tx ? entityManagerOf(tx).findOneBy(AudioIdempotencyEntity, where) : this.records.findOneBy(where);
  }

  async insert(tx: TransactionHandle, record: AudioIdempotencyEntity): Promise<void> {
    await insertRows(tx, AudioIdempotencyEntity, [record]);
  }

  /** Several records in one statement (a batch of creations). */
  async insertMany(tx: TransactionHandle, records: AudioIdempotencyEntity[]): Promise<void> {
    await insertRows(tx, AudioIdempotencyEntity, records);
  }

  /** Deletes records created before `olderThan`; returns how many. */
  async deleteOlderThan(olderThan: Date): Promise<number> {
    const result = await this.records.createQueryBuilder().delete().where('created_at < :olderThan', { olderThan }).execute();
    return result.affected ?? 0;
  }
}
