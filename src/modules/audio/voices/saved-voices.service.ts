import { Injectable } from '@nestjs/common';
import { Clock, DomainError, invalidField } from '../../../../libs/common/index.js';
import type { AuthenticatedKey } from '../../identity/index.js';
import type { ImportVoiceDto } from './dto/import-voice.dto.js';
import type { SavedVoiceEntity } from './saved-voice.entity.js';
import { SavedVoiceRepository } from './saved-voice.repository.js';
import { VoiceCatalogue } from './voice-catalogue.js';
import { savedVoiceNotFound, VoiceErrorCode, voiceUnsupported } from './voice-errors.js';
import { VoicePreviews } from './voice-previews.js';
import { type SavedVoiceListDto, type SavedVoiceResponseDto, toVoiceResource } from './voice.resource.js';
import { ALIAS_PATTERN, isAlias, looksLikeOfficialId, MAX_VOICE_REFERENCE_LENGTH, refusal } from './voice-rules.js';

/** The most voices one API key may save: bounds the list answer (no paging in the spec) and its preview work. */
export const MAX_SAVED_VOICES_PER_KEY = 500;

/** Saved voices of an API key: import (idempotent), list (newest first), remove. */
@Injectable()
export class SavedVoicesService {
  constructor(
    private readonly saved: SavedVoiceRepository,
    private readonly catalogue: VoiceCatalogue,
    private readonly previews: VoicePreviews,
    private readonly clock: Clock,
  ) {}

  /** Saves an official voice (a favourite, not a clone). The same voice again updates its alias when one is given. */
  async import(key: AuthenticatedKey, dto: ImportVoiceDto): Promise<SavedVoiceResponseDto> {
    if (!looksLikeOfficialId(dto.voiceId)) throw voiceUnsupported(dto.voiceId, 'is not an official voice id (aliases and other names cannot be imported)');
    if (dto.alias !== undefined && !isAlias(dto.alias)) {
      throw invalidField('alias', 'twenty lower-case letters and digits could be mistaken for an official voice id; choose another alias');
    }
    const catalogue = this.catalogue.route(key.environment);
    const voice = await this.catalogue.get(catalogue, dto.voiceId);
    if (!voice) throw voiceUnsupported(dto.voiceId, 'is not a voice of the library');
    const why = refusal(voice);
    if (why) throw voiceUnsupported(dto.voiceId, why);

    const outcome = await this.saved.save({
      apiKeyId: key.id,
      voice,
      adapter: catalogue.adapter,
      alias: dto.alias,
      limit: MAX_SAVED_VOICES_PER_KEY,
      now: this.clock.now(),
    });
    if (outcome.kind === 'alias_taken') {
      throw new DomainError(409, VoiceErrorCode.AliasConflict, `alias ${JSON.stringify(dto.alias)} already names another saved voice of this key; remove it first or choose another`);
    }
    if (outcome.kind === 'limit_reached') {
      throw new DomainError(409, VoiceErrorCode.SavedVoicesLimit, `an API key keeps at most ${MAX_SAVED_VOICES_PER_KEY} saved voices; remove one first`);
    }
    return this.toResource(outcome.row);
  }

  async list(key: AuthenticatedKey): Promise<SavedVoiceListDto> {
    const rows = await this.saved.listOwned(key.id, MAX_SAVED_VOICES_PER_KEY);
    return { voices: await Promise.all(rows.map((row) => this.toResource(row))) };
  }

  /** Removes this key's binding named by voice id or alias; another key's, or none, is 404. */
  async remove(key: AuthenticatedKey, voiceIdOrAlias: string): Promise<void> {
    // Only a string shaped like an alias or an official id can name a binding: anything else (a NUL
    // byte PostgreSQL cannot even compare, a 2 KB path segment) is not found without a query.
    const nameable = voiceIdOrAlias.length <= MAX_VOICE_REFERENCE_LENGTH && (ALIAS_PATTERN.test(voiceIdOrAlias) || looksLikeOfficialId(voiceIdOrAlias));
    if (!nameable || !(await this.saved.deleteOwned(key.id, voiceIdOrAlias))) throw savedVoiceNotFound();
  }

  /** The snapshot taken at import, with a preview link minted now. */
  private async toResource(row: SavedVoiceEntity): Promise<SavedVoiceResponseDto> {
    const catalogue = this.catalogue.named(row.adapter);
    const previewUrl = catalogue ? await this.previews.previewUrl(catalogue, row.voice) : row.voice.previewUrl;
    return { ...toVoiceResource(row.voice, previewUrl), alias: row.alias, savedAt: row.createdAt.toISOString() };
  }
}
