/**
 * The sandbox's "speech": real audio whose length follows the text, speech-like but synthetic.
 * Each voice speaks a tone whose pitch comes from its id (so voices are audibly distinct) with
 * a few harmonics, a slow intonation, an amplitude envelope per syllable (about three
 * characters) and silence wherever the text has no letter or digit (the pauses between words).
 *
 * Timing rule (docs/audio.md › Sandbox audio): one character (Unicode code point, spaces and
 * punctuation included, sandbox directives stripped) lasts 1/15 s; a line lasts
 * max(0.5 s, characters / 15) and dialogue lines are separated by 0.3 s of silence. At 24 kHz
 * that is 1,600 samples a character, so every length is a whole number of samples.
 *
 * Pure arithmetic, no randomness: the same lines give the same bytes.
 */
import { endianness } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { stripSandboxDirectives } from '../sandbox/directives.js';
import type { SpeechInput } from './audio-provider.js';

export const PCM_SAMPLE_RATE = 24_000;
/** 15 characters a second. */
export const SAMPLES_PER_CHARACTER = PCM_SAMPLE_RATE / 15;
/** A line never lasts less than half a second. */
export const MIN_LINE_SAMPLES = PCM_SAMPLE_RATE / 2;
/** Silence between two dialogue lines (0.3 s). */
export const LINE_GAP_SAMPLES = (PCM_SAMPLE_RATE * 3) / 10;
/** Generated, and streamed, in blocks of 0.25 s; the event loop gets a turn between blocks. */
export const BLOCK_SAMPLES = PCM_SAMPLE_RATE / 4;

/** Characters a syllable lasts, about: 5 syllables a second. */
const SYLLABLE_CHARACTERS = 3;
const PEAK = 0.35 * 32_767;
/** Harmonic weights of the voiced sound (fundamental first); their sum normalises the peak. */
const HARMONICS = [1, 0.3, 0.12] as const;
const HARMONIC_SUM = HARMONICS.reduce((sum, weight) => sum + weight, 0);
/** Intonation: ±4 % of the pitch, one rise and fall every 1.25 s. */
const INTONATION_DEPTH = 0.04;
const INTONATION_RADIANS = 2 * Math.PI * 0.8;
const VOICED = /[\p{L}\p{N}]/u;
/** Typed arrays use the machine's byte order; PCM is little-endian whatever the machine. */
const LITTLE_ENDIAN = endianness() === 'LE';

export interface SpokenLine {
  /** The characters spoken (directives stripped), as code points. */
  characters: string[];
  pitchHz: number;
  /** Where the line starts in the whole audio, and how long it lasts, in samples. */
  start: number;
  samples: number;
  /** Per character: the first character of its word and the syllable length there (0 when silent). */
  wordStart: Int32Array;
  syllableLength: Float64Array;
}

export interface SpeechPlan {
  lines: SpokenLine[];
  totalSamples: number;
  /** Characters of the text after directives are stripped, spaces included: what the sandbox bills. */
  billableCharacters: number;
}

/**
 * A voice's pitch: 95 Hz to 380 Hz (two octaves, 1,000 steps), from an FNV-1a hash of its id.
 */
export function voicePitchHz(voiceId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < voiceId.length; i++) hash = Math.imul(hash ^ voiceId.charCodeAt(i), 0x01000193) >>> 0;
  return 95 * 2 ** ((hash % 1000) / 500);
}

/** The characters a text is billed and timed by: code points of the text without directives. */
export function spokenCharacters(text: string): string[] {
  return Array.from(stripSandboxDirectives(text));
}

export function planSpeech(inputs: readonly SpeechInput[]): SpeechPlan {
  const lines: SpokenLine[] = [];
  let cursor = 0;
  let billableCharacters = 0;
  for (const input of inputs) {
    if (lines.length > 0) cursor += LINE_GAP_SAMPLES;
    const characters = spokenCharacters(input.text);
    const samples = Math.max(MIN_LINE_SAMPLES, characters.length * SAMPLES_PER_CHARACTER);
    lines.push({ characters, pitchHz: voicePitchHz(input.voiceId), start: cursor, samples, ...words(characters) });
    cursor += samples;
    billableCharacters += characters.length;
  }
  return { lines, totalSamples: cursor, billableCharacters };
}

/** Words are runs of letters and digits; each is cut into syllables of about three characters. */
function words(characters: string[]): Pick<SpokenLine, 'wordStart' | 'syllableLength'> {
  const wordStart = new Int32Array(characters.length);
  const syllableLength = new Float64Array(characters.length);
  let i = 0;
  while (i < characters.length) {
    if (!VOICED.test(characters[i]!)) {
      i++;
      continue;
    }
    let end = i;
    while (end < characters.length && VOICED.test(characters[end]!)) end++;
    const length = end - i;
    const syllable = length / Math.max(1, Math.round(length / SYLLABLE_CHARACTERS));
    for (let k = i; k < end; k++) {
      wordStart[k] = i;
      syllableLength[k] = syllable;
    }
    i = end;
  }
  return { wordStart, syllableLength };
}

/** One sample of a line, `index` samples after its start. */
function lineSample(line: SpokenLine, index: number): number {
  const position = (index * line.characters.length) / line.samples;
  const character = Math.floor(position);
  const syllable = line.syllableLength[character]!;
  if (syllable === 0) return 0;
  const inSyllable = ((position - line.wordStart[character]!) / syllable) % 1;
  const envelope = Math.sqrt(Math.sin(Math.PI * inSyllable));
  const t = index / PCM_SAMPLE_RATE;
  const phase = 2 * Math.PI * line.pitchHz * (t + (INTONATION_DEPTH * (1 - Math.cos(INTONATION_RADIANS * t))) / INTONATION_RADIANS);
  // The harmonics from the fundamental alone: sin 2φ = 2 sin φ cos φ, sin 3φ = 3 sin φ − 4 sin³ φ.
  const sin = Math.sin(phase);
  const wave = HARMONICS[0] * sin + HARMONICS[1] * 2 * sin * Math.cos(phase) + HARMONICS[2] * (3 * sin - 4 * sin * sin * sin);
  return Math.round((PEAK * envelope * wave) / HARMONIC_SUM);
}

/** Samples [start, start + count) of the whole audio as 16-bit little-endian PCM. */
function renderBlock(plan: SpeechPlan, start: number, count: number): Buffer {
  const block = Buffer.alloc(count * 2);
  const values = LITTLE_ENDIAN ? new Int16Array(block.buffer, block.byteOffset, count) : null;
  for (const line of plan.lines) {
    if (line.characters.length === 0) continue;
    const from = Math.max(start, line.start);
    const to = Math.min(start + count, line.start + line.samples);
    for (let sample = from; sample < to; sample++) {
      const value = lineSample(line, sample - line.start);
      if (values) values[sample - start] = value;
      else block.writeInt16LE(value, (sample - start) * 2);
    }
  }
  return block;
}

/** The audio as raw PCM blocks of 0.25 s, produced one at a time as they are asked for. */
export async function* pcmBlocks(plan: SpeechPlan): AsyncGenerator<Buffer> {
  for (let start = 0; start < plan.totalSamples; start += BLOCK_SAMPLES) {
    if (start > 0) await nextTurn();
    yield renderBlock(plan, start, Math.min(BLOCK_SAMPLES, plan.totalSamples - start));
  }
}

/** The whole audio as raw PCM (signed 16-bit little-endian mono, 24 kHz). */
export async function renderPcm(plan: SpeechPlan): Promise<Buffer> {
  const audio = Buffer.alloc(plan.totalSamples * 2);
  let offset = 0;
  for await (const block of pcmBlocks(plan)) offset += block.copy(audio, offset);
  return audio;
}
