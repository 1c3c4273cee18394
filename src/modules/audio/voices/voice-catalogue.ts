import { Injectable, Logger } from '@nestjs/common';
import {
  AUDIO_CAPABILITY,
  type AudioModelId,
  type AudioProvider,
  NoLiveAdapterError,
  ProviderRegistry,
  type VoiceInfo,
  type VoicePage,
  type VoiceQuery,
} from '../../../../libs/providers/index.js';
import type { KeyEnvironment } from '../../identity/index.js';
import { voicesUnavailable } from './voice-errors.js';

/**
 * The model whose route picks the adapter that answers the voice library and imports: every
 * adapter serves its catalogue for all its models, and `voice_v4` is the default model, so its
 * route is the one a deployment configures first.
 */
export const LIBRARY_ROUTING_MODEL: AudioModelId = 'voice_v4';

export interface RoutedCatalogue {
  adapter: string;
  provider: AudioProvider;
}

/**
 * The voice catalogue of the adapter routed for a key's environment (sandbox for `svc_test_`
 * keys and where no live credentials are set). Upstream failures become 503 `audio.unavailable`,
 * so a voice route never answers a bare 500 because the catalogue was unreachable.
 */
@Injectable()
export class VoiceCatalogue {
  private readonly logger = new Logger(VoiceCatalogue.name);

  constructor(private readonly registry: ProviderRegistry) {}

  route(environment: KeyEnvironment, model: AudioModelId = LIBRARY_ROUTING_MODEL): RoutedCatalogue {
    try {
      return this.registry.resolve<AudioProvider>({ capability: AUDIO_CAPABILITY, model, environment });
    } catch (error) {
      if (error instanceof NoLiveAdapterError) {
        throw voicesUnavailable(`${model} is not available on this service: its upstream provider is not configured`);
      }
      throw voicesUnavailable('audio is not configured on this service');
    }
  }

  /** The catalogue of a named adapter (the one a saved voice came from); null when it is no longer registered. */
  named(adapter: string): RoutedCatalogue | null {
    try {
      return { adapter, provider: this.registry.get<AudioProvider>(AUDIO_CAPABILITY, adapter) };
    } catch {
      return null;
    }
  }

  async list(catalogue: RoutedCatalogue, query: VoiceQuery): Promise<VoicePage> {
    return this.upstream(() => catalogue.provider.listVoices(query));
  }

  async get(catalogue: RoutedCatalogue, voiceId: string): Promise<VoiceInfo | null> {
    return this.upstream(() => catalogue.provider.getVoice(voiceId));
  }

  private async upstream<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      this.logger.warn({ msg: 'voice catalogue call failed', err: error });
      throw voicesUnavailable('the voice catalogue is temporarily unavailable; try again later');
    }
  }
}
