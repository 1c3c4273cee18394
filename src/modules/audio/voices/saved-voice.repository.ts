import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import type { VoiceInfo } from '../../../../libs/providers/index.js';
import { SavedVoiceEntity } from './saved-voice.entity.js';

/** Namespace of the per-key advisory lock (first argument of pg_advisory_xact_lock(int, int)). */
const SAVED_VOICE_LOCK_CLASS = 0x73766f69; // "svoi"

export interface SaveVoiceInput {
  apiKeyId: string;
  voice: VoiceInfo;
  adapter: string;
  /** Undefined keeps the alias a repeated import already set. */
  alias?: string;
  /** The most saved voices one key may hold. */
  limit: number;
  now: Date;
}

export type SaveVoiceOutcome =
  | { kind: 'saved'; row: SavedVoiceEntity; created: boolean }
  | { kind: 'alias_taken'; byVoiceId: string }
  | { kind: 'limit_reached' };

/** `saved_voice` rows. Every read and write takes the owning API key id. */
@Injectable()
export class SavedVoiceRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Saves (or updates) the voice under one per-key lock, so the count limit and the alias check
   * hold under concurrent imports of one key; the unique indexes stay the last word.
   */
  save(input: SaveVoiceInput): Promise<SaveVoiceOutcome> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SAVED_VOICE_LOCK_CLASS, input.apiKeyId]);
      const rows = tx.getRepository(SavedVoiceEntity);
      if (input.alias !== undefined) {
        const holder = await rows.findOneBy({ apiKeyId: input.apiKeyId, alias: input.alias });
        if (holder && holder.voiceId !== input.voice.id) return { kind: 'alias_taken', byVoiceId: holder.voiceId };
      }
      const existing = await rows.findOneBy({ apiKeyId: input.apiKeyId, voiceId: input.voice.id });
      if (existing) {
        const row = Object.assign(existing, {
          alias: input.alias ?? existing.alias,
          adapter: input.adapter,
          voice: input.voice,
          updatedAt: input.now,
        });
        await rows.update({ id: existing.id }, { alias: row.alias, adapter: row.adapter, voice: row.voice, updatedAt: row.updatedAt });
        return { kind: 'saved', row, created: false };
      }
      if ((await this.count(tx, input.apiKeyId)) >= input.limit) return { kind: 'limit_reached' };
      const row = Object.assign(new SavedVoiceEntity(), {
        id: randomUUID(),
        apiKeyId: input.apiKeyId,
        voiceId: input.voice.id,
        alias: input.alias ?? null,
        adapter: input.adapter,
        voice: input.voice,
        createdAt: input.now,
        updatedAt: input.now,
      } satisfies SavedVoiceEntity);
      await rows.insert(row);
      return { kind: 'saved', row, created: true };
    });
  }

  /** Newest first; at most `limit` rows (the per-key cap bounds it anyway). */
  listOwned(apiKeyId: string, limit: number): Promise<SavedVoiceEntity[]> {
    return this.db.getRepository(SavedVoiceEntity).find({ where: { apiKeyId }, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
  }

  findOwnedByAlias(apiKeyId: string, alias: string): Promise<SavedVoiceEntity | null> {
    return this.db.getRepository(SavedVoiceEntity).findOneBy({ apiKeyId, alias });
  }

  /** Removes the key's binding named by its voice id or its alias; false when the key has none. */
  async deleteOwned(apiKeyId: string, voiceIdOrAlias: string): Promise<boolean> {
    const result = await this.db
      .createQueryBuilder()
      .delete()
      .from(SavedVoiceEntity)
      .where('api_key_id = :apiKeyId AND (voice_id = :ref OR alias = :ref)', { apiKeyId, ref: voiceIdOrAlias })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  private async count(tx: EntityManager, apiKeyId: string): Promise<number> {
    return tx.getRepository(SavedVoiceEntity).countBy({ apiKeyId });
  }
}
