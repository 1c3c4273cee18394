import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, Repository } from 'typeorm';
import { insertRows } from '../../database/bulk-insert.js';
import { type NamedStatement, namedQuery, namedQueryIn } from '../../database/named-query.js';
import type { TransactionHandle } from '../../database/transaction.js';
import type { DecidedRequest } from './audio-task.repository.js';
import type { AudioEndpoint } from './audio.constants.js';
import { AudioIdempotencyEntity } from './audio-task.entity.js';

export interface IdempotencyScope {
  apiKeyId: string;
  endpoint: AudioEndpoint;
  key: string;
}

/** Statements of every creation with a key: named, prepared once per connection. */
const TRY_CLAIM: NamedStatement = { name: 'audio_idempotency_try_claim', text: `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS claimed` };
const FIND_DECIDED: NamedStatement = {
  name: 'audio_idempotency_find',
  text: `SELECT request_hash AS "requestHash", task_id AS "taskId" FROM audio_idempotency WHERE api_key_id = $1 AND endpoint = $2 AND key = $3`,
};

/** The `audio_idempotency` table: one row per (API key, endpoint, key), written with its task. */
@Injectable()
export class AudioIdempotencyRepository {
  constructor(
    @InjectRepository(AudioIdempotencyEntity) private readonly records: Repository<AudioIdempotencyEntity>,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /**
   * Claims the scope until `tx` ends, without waiting: false means another request with the same
   * key is being decided right now (answered 409 `audio.request_in_progress`, never a blocked request).
   */
  async tryClaim(tx: TransactionHandle, scope: IdempotencyScope): Promise<boolean> {
    const rows = await namedQueryIn<{ claimed: boolean }>(tx, TRY_CLAIM, [`audio-idempotency|${scope.apiKeyId}|${scope.endpoint}|${scope.key}`]);
    return rows[0]?.claimed === true;
  }

  /** The request the scope's key decided and its task, if it decided one (`tx`: read in that transaction). */
  async find(scope: IdempotencyScope, tx?: TransactionHandle): Promise<DecidedRequest | null> {
    const values = [scope.apiKeyId, scope.endpoint, scope.key];
    const rows = tx ? await namedQueryIn<DecidedRequest>(tx, FIND_DECIDED, values) : await namedQuery<DecidedRequest>(this.db, FIND_DECIDED, values);
    return rows[0] ?? null;
  }

  async insert(tx: TransactionHandle, record: AudioIdempotencyEntity): Promise<void> {
    await insertRows(tx, AudioIdempotencyEntity, [record]);
  }

  /** Several records in one statement (a batch of creations). */
  async insertMany(tx: TransactionHandle, records: AudioIdempotencyEntity[]): Promise<void> {
    await insertRows(tx, AudioIdempotencyEntity, records);
  }

  /**
   * Frees the scope's key when it still names `taskId`: a speech stream refused for a reason of the
   * moment (the upstream busy or the gateway's account refused) failed its task, and the spec has
   * the client repeat such a request with the same key (Errors › Audio, 503).
   */
  async forget(scope: IdempotencyScope, taskId: string): Promise<void> {
    await this.db.query(`DELETE FROM audio_idempotency WHERE api_key_id = $1 AND endpoint = $2 AND key = $3 AND task_id = $4`, [scope.apiKeyId, scope.endpoint, scope.key, taskId]);
  }

  /** Deletes records created before `olderThan`; returns how many. */
  async deleteOlderThan(olderThan: Date): Promise<number> {
    const result = await this.records.createQueryBuilder().delete().where('created_at < :olderThan', { olderThan }).execute();
    return result.affected ?? 0;
  }
}
