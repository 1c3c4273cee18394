import { CommonErrorCode, DomainError } from '../../../../libs/common/index.js';

/** Every error code the voice routes and the resolver raise (the spec's dotted strings). */
export enum VoiceErrorCode {
  /** An unknown, repeated or malformed query parameter of the voice library. */
  InvalidQuery = 'audio.invalid_query',
  /** Not an official voice id of a usable voice (unknown, private, removed, custom rate, wrong model). */
  VoiceUnsupported = 'audio.voice_unsupported',
  /** The alias already names another voice saved by this key. */
  AliasConflict = 'audio.alias_conflict',
  /** The key already holds the most saved voices it may keep. */
  SavedVoicesLimit = 'audio.saved_voices_limit',
  /** No saved voice of this key by that id or alias (another key's counts as none). */
  VoiceNotFound = 'audio.voice_not_found',
}

export const invalidQuery = (why: string): DomainError => new DomainError(400, VoiceErrorCode.InvalidQuery, why);

export const voiceUnsupported = (voiceId: string, why: string): DomainError =>
  new DomainError(400, VoiceErrorCode.VoiceUnsupported, `voiceId ${JSON.stringify(voiceId)}: ${why}`);

export const savedVoiceNotFound = (): DomainError => new DomainError(404, VoiceErrorCode.VoiceNotFound, 'saved voice not found');

/**
 * Relative code: the resolver also serves realtime, so the route's domain prefixes it
 * (`audio.unavailable` on audio routes, `realtime.unavailable` on realtime ones).
 */
export const voicesUnavailable = (why: string): DomainError => new DomainError(503, CommonErrorCode.Unavailable, why);
