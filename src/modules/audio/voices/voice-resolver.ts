import type { AudioModelId } from '../../../../libs/providers/index.js';

/** Who asks: the API key (saved aliases are per key) and its environment (which adapter answers). */
export interface VoiceOwner {
  apiKeyId: string;
  environment: 'live' | 'test';
}

/**
 * Turns what a client wrote where a voice is accepted (`controls.voiceId`, dialogue entries,
 * session controls) into an official voice id: a saved alias of this key, or an official id
 * whose voice is available at standard rates and speaks `model`. Null means 400
 * `audio.voice_unsupported`. Provided by AudioVoicesModule; generation and realtime inject it.
 */
export abstract class VoiceResolver {
  abstract resolve(owner: VoiceOwner, voiceIdOrAlias: string, model: AudioModelId): Promise<string | null>;
}
