/**
 * ElevenLabs voices (upstreams.md §2.5) → the gateway's VoiceInfo. Library voices come from
 * `GET /v1/shared-voices`, premade and the account's own voices from `GET /v2/voices`.
 */
import { AUDIO_MODEL_IDS, type VoiceInfo, type VoiceQuery } from './audio-provider.js';
import type { ElevenLabsSharedVoice, ElevenLabsVoice } from './elevenlabs-types.js';

const GENDERS = new Set(['female', 'male', 'neutral']);
const AGES = new Set(['young', 'middle_aged', 'old']);

/**
 * A library voice is at the standard rate when it carries no `fiat_rate` and its `rate`
 * multiplier is absent or 1; anything else is a custom rate the owner set (refused).
 */
export function isStandardRate(voice: Pick<ElevenLabsSharedVoice, 'rate' | 'fiat_rate'>): boolean {
  const fiat = voice.fiat_rate;
  const rate = voice.rate;
  return (fiat === undefined || fiat === null) && (rate === undefined || rate === null || rate === 1);
}

function gender(value: string | undefined): VoiceInfo['gender'] {
  const v = value?.toLowerCase();
  return v && GENDERS.has(v) ? (v as VoiceInfo['gender']) : undefined;
}

function age(value: string | undefined): VoiceInfo['age'] {
  const v = value?.toLowerCase().replace(/[\s-]+/g, '_');
  return v && AGES.has(v) ? (v as VoiceInfo['age']) : undefined;
}

/** Two-letter language: `language`, else the first part of `locale` (`en-US` → `en`). */
function language(lang: string | undefined, locale?: string): string | undefined {
  const value = (lang ?? locale?.split(/[-_]/)[0] ?? '').toLowerCase();
  return /^[a-z]{2}$/.test(value) ? value : undefined;
}

function withoutUndefined(info: VoiceInfo): VoiceInfo {
  return Object.fromEntries(Object.entries(info).filter(([, value]) => value !== undefined)) as unknown as VoiceInfo;
}

/** What a voice says about itself: shared voices carry these as fields, account voices as `labels`. */
interface VoiceTraits {
  description?: string | null;
  language?: string;
  locale?: string;
  accent?: string;
  gender?: string;
  age?: string;
}

/** The VoiceInfo of an upstream voice: every model (the upstream does not restrict them by voice), traits normalised. */
function toVoiceInfo(
  voice: Pick<ElevenLabsVoice, 'voice_id' | 'name' | 'preview_url'>,
  standing: Pick<VoiceInfo, 'status' | 'standardRate' | 'category'>,
  traits: VoiceTraits,
): VoiceInfo {
  return withoutUndefined({
    id: voice.voice_id,
    name: voice.name ?? voice.voice_id,
    ...standing,
    models: [...AUDIO_MODEL_IDS],
    description: traits.description || undefined,
    language: language(traits.language, traits.locale),
    accent: traits.accent || undefined,
    gender: gender(traits.gender),
    age: age(traits.age),
    previewUrl: voice.preview_url || undefined,
  });
}

/** A public-library voice: available, category `library`. */
export function fromSharedVoice(voice: ElevenLabsSharedVoice): VoiceInfo {
  const standing = { status: 'available', standardRate: isStandardRate(voice), category: 'library' } as const;
  return toVoiceInfo(voice, standing, { ...voice, description: voice.description || voice.descriptive });
}

/**
 * A voice of `/v2/voices`: `premade` voices are the official ones (available); any other
 * category there is a voice of the gateway's own account (cloned, generated, professional),
 * which is not public: `private`, so that it is refused.
 */
export function fromAccountVoice(voice: ElevenLabsVoice): VoiceInfo {
  const premade = voice.category === 'premade';
  const labels = voice.labels ?? {};
  const standing = { status: premade ? 'available' : 'private', standardRate: true, category: premade ? 'premade' : 'library' } as const;
  return toVoiceInfo(voice, standing, { ...labels, description: voice.description || labels.description });
}

/** `GET /v1/shared-voices` query of a library page; custom-rate voices are excluded upstream too. */
export function sharedVoicesQuery(query: VoiceQuery): URLSearchParams {
  const params = new URLSearchParams({ page_size: String(query.pageSize), page: String(query.page), include_custom_rates: 'false' });
  if (query.search) params.set('search', query.search);
  if (query.language) params.set('language', query.language);
  if (query.gender) params.set('gender', query.gender);
  if (query.age) params.set('age', query.age);
  return params;
}
