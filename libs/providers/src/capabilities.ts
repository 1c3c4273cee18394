/**
 * What the gateway asks of upstreams, one interface per capability (the interfaces live beside
 * each capability's adapters: text/, video/, speech/, image/, alternate-video/), and which
 * upstream adapter serves each capability when its credentials are set.
 */
export type Capability = 'text' | 'image' | 'video' | 'speech' | 'alternate-video';

export type AdapterName = 'gemini' | 'gemini-video' | 'elevenlabs' | 'kling' | 'sandbox';

/** Which upstream credentials are configured (booleans only: secrets stay in config). */
export interface ProviderCredentials {
  gemini: boolean;
  elevenlabs: boolean;
  kling: boolean;
}

export const LIVE_ADAPTER: Record<Capability, { adapter: Exclude<AdapterName, 'sandbox'>; credential: keyof ProviderCredentials }> = {
  text: { adapter: 'gemini', credential: 'gemini' },
  image: { adapter: 'gemini', credential: 'gemini' },
  video: { adapter: 'gemini-video', credential: 'gemini' },
  speech: { adapter: 'elevenlabs', credential: 'elevenlabs' },
  'alternate-video': { adapter: 'kling', credential: 'kling' },
};
