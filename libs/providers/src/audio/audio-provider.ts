/**
 * What the gateway asks of a speech upstream (DESIGN §1, spec › Audio): synthesize speech or a
 * dialogue in one call or as a stream of chunks, recover a generation whose answer was lost
 * (never by sending it again), and read its voice catalogue. Implemented by the live
 * `elevenlabs` adapter and by the sandbox; registered under the capability `audio`.
 */
import type { ProviderAdapter } from '../capabilities.js';

export const AUDIO_CAPABILITY = 'audio';

/** The public model ids of the audio API. */
export const AUDIO_MODEL_IDS = ['voice_v3', 'voice_v4', 'voice_v4_turbo'] as const;
export type AudioModelId = (typeof AUDIO_MODEL_IDS)[number];

export type AudioMode = 'text_to_speech' | 'text_to_dialogue';

/** `mp3_44100_128`: MP3, 44.1 kHz, 128 kbps; `pcm_24000`: raw signed 16-bit little-endian mono PCM at 24 kHz. */
export const AUDIO_OUTPUT_FORMATS = ['mp3_44100_128', 'pcm_24000'] as const;
export type AudioOutputFormat = (typeof AUDIO_OUTPUT_FORMATS)[number];

export const AUDIO_CONTENT_TYPES: Record<AudioOutputFormat, string> = {
  mp3_44100_128: 'audio/mpeg',
  pcm_24000: 'audio/L16;rate=24000;channels=1',
};

/** One spoken line: the official voice id (aliases are resolved before an adapter sees it). */
export interface SpeechInput {
  text: string;
  voiceId: string;
}

/** Everything about one generation: safe to keep in a row or a job. */
export interface SpeechJobSpec {
  /** Our task id (`audio:<uuid>`): adapters may use it to find a generation again. */
  taskId: string;
  model: AudioModelId;
  mode: AudioMode;
  /** One entry for `text_to_speech`; the dialogue's lines, in order, for `text_to_dialogue`. */
  inputs: SpeechInput[];
  outputFormat: AudioOutputFormat;
  languageCode?: string;
  seed?: number;
  applyTextNormalization?: 'auto' | 'on' | 'off';
}

export type SynthesisOutcome =
  /** The whole audio, and the characters the upstream billed for it. */
  | { kind: 'succeeded'; audio: Buffer; billableCharacters: number }
  /**
   * The upstream answered and produced no audio. `retryable`: sending again is safe and useful
   * (429, 5xx answered before any generation). `billableCharacters`: what it charged anyway, if it said.
   */
  | { kind: 'rejected'; reason: string; retryable: boolean; retryAfterMs?: number; billableCharacters?: number; unhealthy?: boolean }
  /** The request may have reached the upstream but its answer was lost: recover, never resend. */
  | { kind: 'uncertain'; reason: string };

/** A stream the upstream accepted: chunks as it produces them, then the billed characters. */
export interface SpeechStream {
  /** Throws SpeechStreamError when the stream breaks after it started. */
  chunks: AsyncIterable<Buffer>;
  /** Known once the stream has ended (headers or the sandbox's count); undefined when the upstream never said. */
  billableCharacters(): number | undefined;
}

export type StreamOutcome =
  | { kind: 'streaming'; stream: SpeechStream }
  /** `unhealthy`: the upstream refused the gateway (its account, quota or credentials), not this request. */
  | { kind: 'rejected'; reason: string; retryable: boolean; retryAfterMs?: number; unhealthy?: boolean }
  | { kind: 'uncertain'; reason: string };

export class SpeechStreamError extends Error {
  constructor(
    message: string,
    /** What the upstream billed before the stream broke, when it said (response headers). */
    readonly billableCharacters?: number,
  ) {
    super(message);
    this.name = 'SpeechStreamError';
  }
}

export type RecoverOutcome =
  | { kind: 'found'; audio: Buffer; billableCharacters: number }
  /** The upstream cannot say (yet, or ever) what became of the generation. */
  | { kind: 'unknown'; retryAfterMs?: number };

/** A voice as the gateway's catalogue describes it. */
export interface VoiceInfo {
  /** Official voice id in the upstream's style. */
  id: string;
  name: string;
  /** `available` voices are usable; `private` (another account's) and `removed` are refused. */
  status: 'available' | 'private' | 'removed';
  /** False when the voice carries a custom rate (refused: only standard rates are accepted). */
  standardRate: boolean;
  /** `premade` (official) or `library` (public library). */
  category: 'premade' | 'library';
  /** Public model ids the voice speaks. */
  models: AudioModelId[];
  description?: string;
  /** Two-letter language code. */
  language?: string;
  accent?: string;
  gender?: 'female' | 'male' | 'neutral';
  age?: 'young' | 'middle_aged' | 'old';
  /** An upstream sample link; absent when the adapter serves samples through `previewSample`. */
  previewUrl?: string;
}

export interface VoiceQuery {
  /** Name (substring, case-insensitive) or exact official id. */
  search?: string;
  language?: string;
  gender?: 'female' | 'male' | 'neutral';
  age?: 'young' | 'middle_aged' | 'old';
  /** Zero-based. */
  page: number;
  /** At most 30. */
  pageSize: number;
}

/**
 * Whether a voice answers a library query's filters (what an upstream's own search does): `search`
 * its exact id or a case-insensitive name substring; language, gender and age equal. The page is not judged.
 */
export function voiceMatches(voice: VoiceInfo, query: Omit<VoiceQuery, 'page' | 'pageSize'>): boolean {
  if (query.search !== undefined && voice.id !== query.search && !voice.name.toLowerCase().includes(query.search.toLowerCase())) return false;
  if (query.language !== undefined && voice.language?.toLowerCase() !== query.language.toLowerCase()) return false;
  if (query.gender !== undefined && voice.gender !== query.gender) return false;
  if (query.age !== undefined && voice.age !== query.age) return false;
  return true;
}

export interface VoicePage {
  /** Usable voices only (status `available`, standard rate). */
  voices: VoiceInfo[];
  hasMore: boolean;
  totalCount: number;
}

export interface AudioProvider extends ProviderAdapter {
  /** False while the upstream is known to be unusable (circuit open, missing encoder): creation answers 503. */
  available(): boolean;
  synthesize(spec: SpeechJobSpec): Promise<SynthesisOutcome>;
  /** Speech only (`text_to_speech`); resolves once the upstream accepted the request. */
  stream(spec: SpeechJobSpec): Promise<StreamOutcome>;
  /** Finds the audio of `spec.taskId` after an uncertain answer (never resubmits). */
  recover(spec: SpeechJobSpec, submittedAt: Date): Promise<RecoverOutcome>;
  /** How long to wait after an uncertain answer before the first recovery attempt. */
  readonly reconcileDelayMs: number;
  /** After this long without recovering, the task fails (released, never resent). */
  readonly reconcileGiveUpMs: number;

  /** The public library (usable voices only), filtered and paged. */
  listVoices(query: VoiceQuery): Promise<VoicePage>;
  /** One voice by official id, whatever its status (the caller refuses unusable ones); null when unknown. */
  getVoice(voiceId: string): Promise<VoiceInfo | null>;
  /** A short MP3 sample of the voice when the adapter makes its own (the sandbox); null otherwise. */
  previewSample(voiceId: string): Promise<Buffer | null>;
}
