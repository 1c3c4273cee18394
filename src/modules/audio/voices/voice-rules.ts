import type { AudioModelId, VoiceInfo } from '../../../../libs/providers/index.js';

/** DESIGN §10: 1–64 of `a-z 0-9 _ -`. */
export const ALIAS_PATTERN = /^[a-z0-9_-]{1,64}$/;

/**
 * Official ids are 20 base62 characters (the upstream's style). An alias of exactly 20 of
 * `a-z 0-9` could also be an official id, so such aliases are refused: then no string is both a
 * possible alias and a possible official id, and resolution never has to choose between them.
 */
const OFFICIAL_ID_SHAPE = /^[A-Za-z0-9]{20}$/;

/** The longest string the resolver looks at: longer input is neither an alias nor an id. */
export const MAX_VOICE_REFERENCE_LENGTH = 64;

export const isAlias = (value: string): boolean => ALIAS_PATTERN.test(value) && !OFFICIAL_ID_SHAPE.test(value);

export const looksLikeOfficialId = (value: string): boolean => OFFICIAL_ID_SHAPE.test(value);

/** Why a voice is refused for generation (spec › Voice), or null when it is usable. */
export function refusal(voice: VoiceInfo, model?: AudioModelId): string | null {
  if (voice.status === 'private') return 'is a private voice of another account';
  if (voice.status === 'removed') return 'has been removed';
  if (voice.status !== 'available') return `is not available (${voice.status as string})`;
  if (!voice.standardRate) return 'carries a custom rate; only standard-rate voices are accepted';
  if (model && !voice.models.includes(model)) return `does not speak ${model}`;
  return null;
}
