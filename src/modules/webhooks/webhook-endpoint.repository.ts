import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { entityManagerOf, type TransactionHandle } from '../../database/transaction.js';
import { WebhookEndpointEntity } from './webhook-endpoint.entity.js';
import type { WebhookEventType } from './webhook-events.js';

/** Namespace of the per-key creation lock (first argument of pg_advisory_xact_lock(int, int)). */
const ENDPOINT_LOCK_CLASS = 0x7768656b; // "whek"

export type InsertOutcome = { kind: 'created'; row: WebhookEndpointEntity } | { kind: 'limit_reached' };

export interface EndpointChanges {
  url?: string;
  events?: WebhookEventType[];
  enabled?: boolean;
  secretSealed?: string;
}

/** `webhook_endpoint` rows. Reads and writes on behalf of a client take the owning API key id. */
@Injectable()
export class WebhookEndpointRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Inserts under a per-key advisory lock, so the count limit holds under concurrent creations of
   * one key (the lock is released with the transaction).
   */
  insertWithinLimit(row: WebhookEndpointEntity, limit: number): Promise<InsertOutcome> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ENDPOINT_LOCK_CLASS, row.apiKeyId]);
      const rows = tx.getRepository(WebhookEndpointEntity);
      if ((await rows.countBy({ apiKeyId: row.apiKeyId })) >= limit) return { kind: 'limit_reached' };
      await rows.insert(row);
      return { kind: 'created', row };
    });
  }

  /** Newest first; `limit` bounds the answer (the per-key cap bounds it anyway). */
  listOwned(apiKeyId: string, limit: number): Promise<WebhookEndpointEntity[]> {
    return this.db.getRepository(WebhookEndpointEntity).find({ where: { apiKeyId }, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
  }

  findOwned(apiKeyId: string, id: string): Promise<WebhookEndpointEntity | null> {
    return this.db.getRepository(WebhookEndpointEntity).findOneBy({ id, apiKeyId });
  }

  /** Any key's endpoint: for the delivery side, which acts on rows it already owns. */
  find(id: string): Promise<WebhookEndpointEntity | null> {
    return this.db.getRepository(WebhookEndpointEntity).findOneBy({ id });
  }

  /** Read inside the caller's transaction (the audio terminal transaction, for the outbox). */
  findIn(tx: TransactionHandle, id: string): Promise<WebhookEndpointEntity | null> {
    return entityManagerOf(tx).getRepository(WebhookEndpointEntity).findOneBy({ id });
  }

  /** Applies the changes to the key's endpoint in one statement; the updated row, or null when it is not the key's. */
  async updateOwned(apiKeyId: string, id: string, changes: EndpointChanges, now: Date): Promise<WebhookEndpointEntity | null> {
    const result = await this.db
      .createQueryBuilder()
      .update(WebhookEndpointEntity)
      .set({ ...changes, updatedAt: now })
      .where('id = :id AND api_key_id = :apiKeyId', { id, apiKeyId })
      .returning('*')
      .execute();
    const raw = (result.raw as Array<Record<string, unknown>>)[0];
    return raw ? fromRaw(raw) : null;
  }
}

/** RETURNING * gives column names; map them back to the entity's properties. */
function fromRaw(raw: Record<string, unknown>): WebhookEndpointEntity {
  return Object.assign(new WebhookEndpointEntity(), {
    id: raw.id as string,
    apiKeyId: raw.api_key_id as string,
    url: raw.url as string,
    events: raw.events as WebhookEventType[],
    enabled: raw.enabled as boolean,
    secretSealed: raw.secret_sealed as string,
    createdAt: raw.created_at as Date,
    updatedAt: raw.updated_at as Date,
  });
}
