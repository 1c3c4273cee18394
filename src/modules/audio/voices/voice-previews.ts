import { Injectable, Logger } from '@nestjs/common';
import type { VoiceInfo } from '../../../../libs/providers/index.js';
import { MediaNotFoundError } from '../../media/index.js';
import { MediaService } from '../../media/media.service.js';
import type { RoutedCatalogue } from './voice-catalogue.js';

/** Lifetime of a minted preview link: the longest signed link (DESIGN §6: ≤ 1 h). */
export const PREVIEW_LINK_TTL_SECONDS = 3600;
export const PREVIEW_CONTENT_TYPE = 'audio/mpeg';
/** Voice ids safe inside a media key (the upstream's ids are base62). */
const KEY_SAFE_ID = /^[A-Za-z0-9]{1,64}$/;

/** Where a voice's sample lives in media storage: fixed, so every process and request finds the same object. */
export const previewKey = (adapter: string, voiceId: string): string => `voice-previews/${adapter}/${voiceId}.mp3`;

/**
 * Preview links for voices whose adapter makes its own samples (the sandbox). The sample is
 * stored once under a fixed key with no expiry and served by the media route through a signed
 * link: no Bearer (an `<audio>` element plays it) and no wallet. Live voices keep the upstream's
 * `preview_url`.
 */
@Injectable()
export class VoicePreviews {
  private readonly logger = new Logger(VoicePreviews.name);
  /** One generation per voice and process; concurrent requests await the same one. Bounded by the catalogues. */
  private readonly generations = new Map<string, Promise<boolean>>();
  /** Samples are made one at a time (ffmpeg runs): a first page of 30 never starts 30 encoders at once. */
  private encoder: Promise<unknown> = Promise.resolve();

  constructor(private readonly media: MediaService) {}

  /** The voice's preview link, or undefined when no sample exists. */
  async previewUrl(catalogue: RoutedCatalogue, voice: VoiceInfo): Promise<string | undefined> {
    if (voice.previewUrl) return voice.previewUrl;
    if (!KEY_SAFE_ID.test(voice.id)) return undefined;
    const key = previewKey(catalogue.adapter, voice.id);
    const stored = await this.link(key);
    if (stored) return stored;
    if (!(await this.generateOnce(catalogue, voice.id, key))) return undefined;
    const link = await this.link(key);
    // Stored and gone at once (deleted meanwhile): let a later request make it again.
    if (!link) this.generations.delete(key);
    return link;
  }

  private async link(key: string): Promise<string | undefined> {
    try {
      return (await this.media.signedLink(key, PREVIEW_LINK_TTL_SECONDS)).url;
    } catch (error) {
      if (error instanceof MediaNotFoundError) return undefined;
      throw error;
    }
  }

  private generateOnce(catalogue: RoutedCatalogue, voiceId: string, key: string): Promise<boolean> {
    let generation = this.generations.get(key);
    if (!generation) {
      generation = this.generate(catalogue, voiceId, key);
      this.generations.set(key, generation);
      // A failure is not remembered: the next request tries again.
      void generation.then(
        (made) => made || this.generations.delete(key),
        () => this.generations.delete(key),
      );
    }
    return generation.catch((error: unknown) => {
      this.logger.warn({ msg: 'voice preview could not be made', voiceId, err: error });
      return false;
    });
  }

  private generate(catalogue: RoutedCatalogue, voiceId: string, key: string): Promise<boolean> {
    const run = this.encoder.then(async () => {
      const sample = await catalogue.provider.previewSample(voiceId);
      if (!sample?.length) return false;
      await this.media.store({ key, body: sample, contentType: PREVIEW_CONTENT_TYPE, workspaceId: null, expiresAt: null });
      return true;
    });
    this.encoder = run.catch(() => undefined);
    return run;
  }
}
