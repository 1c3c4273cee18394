import { Injectable } from '@nestjs/common';
import { type VoicePage, voiceMatches } from '../../../../libs/providers/index.js';
import type { AuthenticatedKey } from '../../identity/index.js';
import { LIBRARY_PAGE_SIZE, type VoiceLibraryRequest } from './dto/voice-library.query.js';
import { type RoutedCatalogue, VoiceCatalogue } from './voice-catalogue.js';
import { VoicePreviews } from './voice-previews.js';
import { toVoiceResource, type VoiceLibraryPageDto } from './voice.resource.js';
import { refusal } from './voice-rules.js';

/** GET /v1/audio/voice-library: the routed adapter's usable voices, 30 a page, with playable previews. */
@Injectable()
export class VoiceLibraryService {
  constructor(
    private readonly catalogue: VoiceCatalogue,
    private readonly previews: VoicePreviews,
  ) {}

  async page(key: AuthenticatedKey, request: VoiceLibraryRequest): Promise<VoiceLibraryPageDto> {
    const catalogue = this.catalogue.route(key.environment);
    const found = request.voiceId !== undefined ? await this.lookup(catalogue, request.voiceId, request) : await this.search(catalogue, request);
    // Refused voices never reach a client, whatever an adapter returns; a page never exceeds 30.
    const usable = found.voices.filter((voice) => refusal(voice) === null).slice(0, LIBRARY_PAGE_SIZE);
    const voices = await Promise.all(usable.map(async (voice) => toVoiceResource(voice, await this.previews.previewUrl(catalogue, voice))));
    return { voices, page: request.page, hasMore: found.hasMore, totalCount: found.totalCount };
  }

  private search(catalogue: RoutedCatalogue, request: VoiceLibraryRequest): Promise<VoicePage> {
    const { search, language, gender, age, page } = request;
    return this.catalogue.list(catalogue, { search, language, gender, age, page, pageSize: LIBRARY_PAGE_SIZE });
  }

  /** `voiceId`: that voice when it is usable (and matches any other filter given), else an empty page. */
  private async lookup(catalogue: RoutedCatalogue, voiceId: string, request: VoiceLibraryRequest): Promise<VoicePage> {
    const voice = await this.catalogue.get(catalogue, voiceId);
    const matches = voice !== null && refusal(voice) === null && voiceMatches(voice, request);
    return { voices: matches && request.page === 0 ? [voice] : [], hasMore: false, totalCount: matches ? 1 : 0 };
  }
}
