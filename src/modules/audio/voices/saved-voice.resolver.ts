import { Injectable } from '@nestjs/common';
import type { AudioModelId } from '../../../../libs/providers/index.js';
import { SavedVoiceRepository } from './saved-voice.repository.js';
import { VoiceCatalogue } from './voice-catalogue.js';
import { VoiceResolver, type VoiceOwner } from './voice-resolver.js';
import { isAlias, looksLikeOfficialId, MAX_VOICE_REFERENCE_LENGTH, refusal } from './voice-rules.js';

/**
 * The VoiceResolver behind generation and realtime: an alias of this key names its saved voice,
 * anything else must be an official id. Either way the voice must still be usable for `model`
 * now (available, standard rate, speaks the model), so a voice removed after it was saved, or
 * saved for another model, is refused before any hold rather than by the upstream.
 */
@Injectable()
export class SavedVoiceResolver extends VoiceResolver {
  constructor(
    private readonly saved: SavedVoiceRepository,
    private readonly catalogue: VoiceCatalogue,
  ) {
    super();
  }

  async resolve(owner: VoiceOwner, voiceIdOrAlias: string, model: AudioModelId): Promise<string | null> {
    if (typeof voiceIdOrAlias !== 'string' || voiceIdOrAlias.length > MAX_VOICE_REFERENCE_LENGTH) return null;
    let voiceId = voiceIdOrAlias;
    if (isAlias(voiceIdOrAlias)) {
      const row = await this.saved.findOwnedByAlias(owner.apiKeyId, voiceIdOrAlias);
      if (!row) return null;
      voiceId = row.voiceId;
    } else if (!looksLikeOfficialId(voiceIdOrAlias)) {
      return null;
    }
    const catalogue = this.catalogue.route(owner.environment, model);
    const voice = await this.catalogue.get(catalogue, voiceId);
    return voice && refusal(voice, model) === null ? voice.id : null;
  }
}
