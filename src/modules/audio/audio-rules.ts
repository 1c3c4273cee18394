import type { AudioMode, AudioModelId, AudioOutputFormat } from '../../../libs/providers/index.js';
import { AUDIO_MAX_DIALOGUE_VOICES, AUDIO_MAX_TEXT_CHARACTERS } from './audio.constants.js';
import { AudioErrorCode, audioInvalid } from './audio-errors.js';
import type { CreateAudioGenerationDto } from './dto/create-audio-generation.dto.js';

/** Models that speak dialogue (spec: `voice_v4_turbo` accepts single-speaker speech only). */
export const MODEL_MODES: Record<AudioModelId, readonly AudioMode[]> = {
  voice_v3: ['text_to_speech', 'text_to_dialogue'],
  voice_v4: ['text_to_speech', 'text_to_dialogue'],
  voice_v4_turbo: ['text_to_speech'],
};

export const DEFAULT_OUTPUT_FORMAT: AudioOutputFormat = 'mp3_44100_128';

/** One line as the client wrote it: the voice is an official id or an alias, not yet resolved. */
export interface RequestedLine {
  text: string;
  voice: string;
}

/** A request that passed every rule that needs no lookup; `voice`s still to resolve. */
export interface ValidatedAudioRequest {
  model: AudioModelId;
  mode: AudioMode;
  lines: RequestedLine[];
  outputFormat: AudioOutputFormat;
  languageCode?: string;
  seed?: number;
  applyTextNormalization?: 'auto' | 'on' | 'off';
  webhookEndpointId?: string;
  /** Characters submitted (Unicode code points, whitespace and tags included). */
  inputCharacters: number;
}

/** Characters as people count them: code points, so an emoji is one, not two UTF-16 units. */
export const characterCount = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/**
 * Characters that are never spoken and that the store cannot hold: control characters (C0, DEL,
 * C1) other than tab, line feed and carriage return, and UTF-16 surrogates without their pair
 * (JSON can carry a lone `\ud800`; PostgreSQL refuses it, and NUL, in a jsonb value).
 */
const UNSPEAKABLE = /(?![\t\n\r])[\p{Cc}\p{Cs}]/u;

/** A text to speak: something besides whitespace, and nothing unspeakable (400 before any lookup or hold). */
function checkSpokenText(field: string, text: string): void {
  if (UNSPEAKABLE.test(text)) throw audioInvalid(field, 'must not contain control characters (other than tab and line breaks) or unpaired surrogates');
  if (/^\s*$/u.test(text)) throw audioInvalid(field, 'must contain something to speak, not only whitespace');
}

/**
 * The rules of spec › Audio generation request that span fields (the DTO checks each field):
 * speech has a prompt and a voice and no dialogue; dialogue has lines and neither; the model
 * speaks the mode; text ≤ 2,000 characters; at most ten distinct voices (as written here, at
 * most twenty; as resolved, ten: AudioGenerationService).
 */
export function validateAudioRequest(dto: CreateAudioGenerationDto): ValidatedAudioRequest {
  if (!MODEL_MODES[dto.model].includes(dto.mode)) {
    throw audioInvalid('mode', `${dto.model} does not support ${dto.mode} (single-speaker speech only)`, AudioErrorCode.UnsupportedMode);
  }
  const lines = dto.mode === 'text_to_speech' ? speechLines(dto) : dialogueLines(dto);
  const inputCharacters = lines.reduce((sum, line) => sum + characterCount(line.text), 0);
  if (inputCharacters > AUDIO_MAX_TEXT_CHARACTERS) {
    const field = dto.mode === 'text_to_speech' ? 'prompt' : 'dialogue';
    throw audioInvalid(field, `${inputCharacters} characters; at most ${AUDIO_MAX_TEXT_CHARACTERS} per request`, AudioErrorCode.TextTooLong);
  }
  const voiceOptions = dto.providerOptions?.voice;
  return {
    model: dto.model,
    mode: dto.mode,
    lines,
    outputFormat: dto.controls?.outputFormat ?? DEFAULT_OUTPUT_FORMAT,
    ...(dto.controls?.languageCode !== undefined ? { languageCode: dto.controls.languageCode.toLowerCase() } : {}),
    ...(voiceOptions?.seed !== undefined ? { seed: voiceOptions.seed } : {}),
    ...(voiceOptions?.applyTextNormalization !== undefined ? { applyTextNormalization: voiceOptions.applyTextNormalization } : {}),
    ...(dto.webhookEndpointId !== undefined ? { webhookEndpointId: dto.webhookEndpointId } : {}),
    inputCharacters,
  };
}

function speechLines(dto: CreateAudioGenerationDto): RequestedLine[] {
  if (dto.dialogue !== undefined) throw audioInvalid('dialogue', 'only for text_to_dialogue');
  if (dto.prompt === undefined) throw audioInvalid('prompt', 'is required for text_to_speech');
  if (characterCount(dto.prompt) === 0) throw audioInvalid('prompt', 'must not be empty');
  checkSpokenText('prompt', dto.prompt);
  const voice = dto.controls?.voiceId;
  if (voice === undefined) throw audioInvalid('controls.voiceId', 'is required for text_to_speech');
  return [{ text: dto.prompt, voice }];
}

function dialogueLines(dto: CreateAudioGenerationDto): RequestedLine[] {
  if (dto.prompt !== undefined) throw audioInvalid('prompt', 'must be omitted for text_to_dialogue (the text is in dialogue)');
  if (dto.controls?.voiceId !== undefined) throw audioInvalid('controls.voiceId', 'must be omitted for text_to_dialogue (each line names its voice)');
  if (dto.dialogue === undefined) throw audioInvalid('dialogue', 'is required for text_to_dialogue');
  dto.dialogue.forEach((entry, index) => checkSpokenText(`dialogue.${index}.text`, entry.text));
  // Ten distinct voices are counted once aliases resolve (an alias and its voice's id are one
  // voice). A key gives a voice at most one alias, so ten voices are written at most twenty ways:
  // more is refused here, before any lookup.
  const voices = new Set(dto.dialogue.map((entry) => entry.voiceId));
  if (voices.size > 2 * AUDIO_MAX_DIALOGUE_VOICES) {
    throw audioInvalid('dialogue', `${voices.size} distinct voices; at most ${AUDIO_MAX_DIALOGUE_VOICES}`);
  }
  return dto.dialogue.map((entry) => ({ text: entry.text, voice: entry.voiceId }));
}

/**
 * What two requests must share to be "the same request" under one idempotency key: the validated
 * request with defaults filled in (an omitted default equals the default written out) and voices
 * as written (an alias, not what it resolves to today). Key order is fixed by construction.
 */
export function canonicalRequest(request: ValidatedAudioRequest): string {
  return JSON.stringify({
    model: request.model,
    mode: request.mode,
    lines: request.lines.map((line) => [line.text, line.voice]),
    outputFormat: request.outputFormat,
    languageCode: request.languageCode ?? null,
    seed: request.seed ?? null,
    applyTextNormalization: request.applyTextNormalization ?? null,
    webhookEndpointId: request.webhookEndpointId ?? null,
  });
}
