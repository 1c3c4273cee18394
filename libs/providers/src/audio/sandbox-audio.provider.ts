import { setTimeout as sleep } from 'node:timers/promises';
import { ProviderAdapterFor, SANDBOX_ADAPTER } from '../capabilities.js';
import { parseSandboxDirectives, type SandboxDirectives } from '../sandbox/directives.js';
import { FfmpegPresence } from '../sandbox/ffmpeg-presence.js';
import { AUDIO_CAPABILITY, AUDIO_MODEL_IDS, SpeechStreamError } from './audio-provider.js';
import type { AudioProvider, RecoverOutcome, SpeechJobSpec, StreamOutcome, SynthesisOutcome, VoiceInfo, VoicePage, VoiceQuery } from './audio-provider.js';
import { encodeMp3, encodeMp3Whole } from './mp3-encoder.js';
import { findSandboxVoice, isUsableVoice, listSandboxVoices } from './sandbox-voice-catalogue.js';
import { PCM_SAMPLE_RATE, pcmBlocks, planSpeech, renderPcm, type SpeechPlan } from './sandbox-speech.js';

export interface SandboxAudioOptions {
  /** Path of an ffmpeg binary with libmp3lame (`bundledFfmpegPath()`); null: MP3 cannot be made. */
  ffmpegPath: string | null;
}

/** Bounds the work one request can cause: 10,000 characters ≈ 11 minutes, 32 MB of PCM. */
export const MAX_SANDBOX_AUDIO_CHARACTERS = 10_000;
/** ffmpeg gets this long plus the audio's own duration (a consumer reading in real time finishes within it). */
const ENCODE_GRACE_MS = 30_000;
/** Tasks whose submissions are counted (tests assert "never sent again"); the oldest are forgotten. */
const MAX_COUNTED_TASKS = 10_000;
/** The upstream's dialogue limit (upstreams.md §2.4). */
const MAX_DIALOGUE_VOICES = 10;
/** What a preview says: 33 characters, 2.2 s. */
const PREVIEW_TEXT = 'Hello there, this is how I sound.';

/**
 * The in-process speech "upstream" (DESIGN §1, §4a, §10): deterministic, needs no credentials,
 * and returns real audio whose length follows the text (see sandbox-speech.ts): raw PCM, or an
 * MP3 encoded by the bundled ffmpeg. Stateless: recovering after a lost answer regenerates the
 * same bytes. Directives in any line: `[sandbox:fail]`, `[sandbox:delay=<ms>]`,
 * `[sandbox:uncertain]` (the answer is lost; `recover` finds the audio).
 */
@ProviderAdapterFor(AUDIO_CAPABILITY)
export class SandboxAudioProvider implements AudioProvider {
  readonly name = SANDBOX_ADAPTER;
  readonly live = false;
  readonly models = AUDIO_MODEL_IDS;
  readonly reconcileDelayMs = 200;
  readonly reconcileGiveUpMs = 10 * 60_000;
  /** Generation requests (synthesize and stream) seen per task in this process. */
  readonly submissions = new Map<string, number>();
  /** One sample per catalogue voice at most: the key set is the catalogue's. */
  private readonly previews = new Map<string, Promise<Buffer>>();
  private readonly ffmpeg: FfmpegPresence;

  constructor(private readonly options: SandboxAudioOptions) {
    this.ffmpeg = new FfmpegPresence(options.ffmpegPath);
  }

  credentialled(): boolean {
    return true;
  }

  available(): boolean {
    return this.ffmpeg.available;
  }

  async synthesize(spec: SpeechJobSpec): Promise<SynthesisOutcome> {
    this.countSubmission(spec.taskId);
    const directives = this.directives(spec);
    if (directives.delayMs > 0) await sleep(directives.delayMs);
    const refusal = this.refusal(spec, directives);
    if (refusal) return { kind: 'rejected', reason: refusal, retryable: false };
    if (directives.uncertain) return { kind: 'uncertain', reason: 'sandbox: the answer was lost (sandbox:uncertain)' };
    const plan = planSpeech(spec.inputs);
    try {
      return { kind: 'succeeded', audio: await this.render(spec, plan), billableCharacters: plan.billableCharacters };
    } catch (error) {
      // Nothing was generated that could be billed: sending again is safe.
      return { kind: 'rejected', reason: `sandbox: ${(error as Error).message}`, retryable: true };
    }
  }

  /**
   * Answers once "accepted"; the chunks then follow as they are produced: 0.25 s PCM blocks, or
   * ffmpeg's MP3 frames as it writes them. A delay directive is spent before the answer when the
   * request is refused or lost, and before the first chunk when it is accepted.
   */
  async stream(spec: SpeechJobSpec): Promise<StreamOutcome> {
    this.countSubmission(spec.taskId);
    const directives = this.directives(spec);
    const refusal = spec.mode === 'text_to_speech' ? this.refusal(spec, directives) : 'sandbox: only text_to_speech can be streamed';
    if (refusal || directives.uncertain) {
      if (directives.delayMs > 0) await sleep(directives.delayMs);
      if (refusal) return { kind: 'rejected', reason: refusal, retryable: false };
      return { kind: 'uncertain', reason: 'sandbox: the answer was lost (sandbox:uncertain)' };
    }
    const plan = planSpeech(spec.inputs);
    let billable: number | undefined;
    const chunks = this.produce(spec, plan, directives.delayMs, () => (billable = plan.billableCharacters));
    return { kind: 'streaming', stream: { chunks, billableCharacters: () => billable } };
  }

  /** Everything the sandbox was sent and did not refuse, it generated: regenerate the same bytes. */
  async recover(spec: SpeechJobSpec, _submittedAt?: Date): Promise<RecoverOutcome> {
    if (this.refusal(spec, this.directives(spec))) return { kind: 'unknown' };
    const plan = planSpeech(spec.inputs);
    try {
      return { kind: 'found', audio: await this.render(spec, plan), billableCharacters: plan.billableCharacters };
    } catch {
      return { kind: 'unknown', retryAfterMs: this.reconcileDelayMs };
    }
  }

  async listVoices(query: VoiceQuery): Promise<VoicePage> {
    return listSandboxVoices(query);
  }

  async getVoice(voiceId: string): Promise<VoiceInfo | null> {
    return findSandboxVoice(voiceId);
  }

  /** A 2.2 s MP3 in the voice's pitch, made once per catalogue voice; null for an unknown id. */
  async previewSample(voiceId: string): Promise<Buffer | null> {
    if (!findSandboxVoice(voiceId)) return null;
    let sample = this.previews.get(voiceId);
    if (!sample) {
      sample = this.mp3(planSpeech([{ text: PREVIEW_TEXT, voiceId }]));
      this.previews.set(voiceId, sample);
      // A failed encoding is not kept: the next request tries again.
      sample.catch(() => this.previews.delete(voiceId));
    }
    return sample;
  }

  private directives(spec: SpeechJobSpec): SandboxDirectives {
    return parseSandboxDirectives(...spec.inputs.map((input) => input.text));
  }

  /** What the upstream would refuse (the gateway refuses it first; the sandbox does not trust that). */
  private refusal(spec: SpeechJobSpec, directives: SandboxDirectives): string | null {
    if (directives.fail) return 'the upstream failed to generate the audio (sandbox:fail)';
    if (spec.inputs.length === 0 || (spec.mode === 'text_to_speech' && spec.inputs.length !== 1)) return 'sandbox: text_to_speech takes exactly one input';
    if (spec.mode === 'text_to_dialogue' && spec.model === 'voice_v4_turbo') return 'sandbox: voice_v4_turbo does not speak dialogue';
    if (new Set(spec.inputs.map((input) => input.voiceId)).size > MAX_DIALOGUE_VOICES) return `sandbox: a dialogue takes at most ${MAX_DIALOGUE_VOICES} distinct voices`;
    for (const input of spec.inputs) {
      const voice = findSandboxVoice(input.voiceId);
      if (!voice || !isUsableVoice(voice)) return `sandbox: voice_not_found (${input.voiceId})`;
      if (!voice.models.includes(spec.model)) return `sandbox: voice ${input.voiceId} does not speak ${spec.model}`;
    }
    const characters = planSpeech(spec.inputs).billableCharacters;
    if (characters > MAX_SANDBOX_AUDIO_CHARACTERS) return `sandbox: max_character_limit_exceeded (${characters} > ${MAX_SANDBOX_AUDIO_CHARACTERS})`;
    if (spec.outputFormat === 'mp3_44100_128' && !this.available()) return 'sandbox: ffmpeg is not available, no MP3 can be made';
    return null;
  }

  private render(spec: SpeechJobSpec, plan: SpeechPlan): Promise<Buffer> {
    return spec.outputFormat === 'pcm_24000' ? renderPcm(plan) : this.mp3(plan);
  }

  private mp3(plan: SpeechPlan): Promise<Buffer> {
    if (!this.available()) return Promise.reject(new Error('ffmpeg is not available'));
    return encodeMp3Whole(this.options.ffmpegPath!, pcmBlocks(plan), encodeTimeoutMs(plan));
  }

  private async *produce(spec: SpeechJobSpec, plan: SpeechPlan, delayMs: number, ended: () => void): AsyncGenerator<Buffer> {
    if (delayMs > 0) await sleep(delayMs);
    const chunks = spec.outputFormat === 'pcm_24000' ? pcmBlocks(plan) : encodeMp3(this.options.ffmpegPath!, pcmBlocks(plan), encodeTimeoutMs(plan));
    try {
      yield* chunks;
    } catch (error) {
      throw new SpeechStreamError(`sandbox: the stream broke: ${(error as Error).message}`);
    }
    ended();
  }

  private countSubmission(taskId: string): void {
    const seen = this.submissions.get(taskId) ?? 0;
    this.submissions.delete(taskId);
    this.submissions.set(taskId, seen + 1);
    if (this.submissions.size > MAX_COUNTED_TASKS) this.submissions.delete(this.submissions.keys().next().value!);
  }
}

function encodeTimeoutMs(plan: SpeechPlan): number {
  return ENCODE_GRACE_MS + Math.ceil((plan.totalSamples / PCM_SAMPLE_RATE) * 1000);
}
