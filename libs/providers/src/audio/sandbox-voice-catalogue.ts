/**
 * Queries over the sandbox's voice catalogue, as the upstream's shared library answers them:
 * usable voices only, filtered, in a stable order, paged from zero.
 */
import { type VoiceInfo, type VoicePage, type VoiceQuery, voiceMatches } from './audio-provider.js';
import { SANDBOX_VOICES } from './sandbox-voices.js';

/** The spec's page limit (spec › Audio 7). */
export const MAX_VOICE_PAGE_SIZE = 30;

const BY_ID = new Map(SANDBOX_VOICES.map((voice) => [voice.id, voice]));

/** Usable wherever a voice is accepted: available and at the standard rate (spec › Voice). */
export function isUsableVoice(voice: Pick<VoiceInfo, 'status' | 'standardRate'>): boolean {
  return voice.status === 'available' && voice.standardRate;
}

/** A copy, so a caller that decorates a voice (a preview link, say) cannot change the catalogue. */
function copy(voice: Readonly<VoiceInfo>): VoiceInfo {
  return { ...voice, models: [...voice.models] };
}

/** One page of usable voices; a page size outside 1–30 is brought inside it, a negative page reads as 0. */
export function listSandboxVoices(query: VoiceQuery): VoicePage {
  const pageSize = Math.min(Math.max(Math.trunc(query.pageSize) || 1, 1), MAX_VOICE_PAGE_SIZE);
  const page = Math.max(Math.trunc(query.page) || 0, 0);
  const found = SANDBOX_VOICES.filter((voice) => isUsableVoice(voice) && voiceMatches(voice, query));
  const start = page * pageSize;
  return {
    voices: found.slice(start, start + pageSize).map(copy),
    hasMore: start + pageSize < found.length,
    totalCount: found.length,
  };
}

/** Any catalogue voice by its exact id, refused ones included; null when unknown. */
export function findSandboxVoice(voiceId: string): VoiceInfo | null {
  const voice = BY_ID.get(voiceId);
  return voice ? copy(voice) : null;
}
