import { Pool, type Dispatcher } from 'undici';
import { ProviderAdapterFor } from '../capabilities.js';
import { CircuitBreaker } from '../video/circuit-breaker.js';
import { AUDIO_CAPABILITY, AUDIO_MODEL_IDS, SpeechStreamError, voiceMatches } from './audio-provider.js';
import type { AudioModelId, AudioProvider, RecoverOutcome, SpeechJobSpec, StreamOutcome, SynthesisOutcome, VoiceInfo, VoicePage, VoiceQuery } from './audio-provider.js';
import { declaresMoreThan, readBounded } from './bounded-body.js';
import { classifyRefusal, classifyTransportError, detailStatus, parseErrorBody, type UpstreamRefusal } from './elevenlabs-errors.js';
import type { ElevenLabsDialogueBody, ElevenLabsSharedVoicesPage, ElevenLabsSpeechBody, ElevenLabsVoicesPage } from './elevenlabs-types.js';
import { fromAccountVoice, fromSharedVoice, sharedVoicesQuery } from './elevenlabs-voices.js';
import { TtlLruCache } from './ttl-lru-cache.js';
import { VoiceCatalogueError } from './voice-catalogue.error.js';

/** Our public models → ElevenLabs text-to-speech models (docs/audio.md › Live adapter). */
export const ELEVENLABS_SPEECH_MODELS: Record<AudioModelId, string> = {
  voice_v3: 'eleven_multilingual_v2',
  voice_v4: 'eleven_v3',
  voice_v4_turbo: 'eleven_flash_v2_5',
};

/** Only `eleven_v3` speaks dialogues; `voice_v4_turbo` has none (refused before it gets here). */
export const ELEVENLABS_DIALOGUE_MODELS: Partial<Record<AudioModelId, string>> = {
  voice_v3: 'eleven_v3',
  voice_v4: 'eleven_v3',
};

export interface ElevenLabsAudioOptions {
  apiKey: string;
  baseUrl: string;
  connections?: number;
  /** Time to open a connection; past it nothing was sent (safe to retry). */
  connectTimeoutMs?: number;
  /** Time to the response headers of a whole-audio synthesis (ElevenLabs answers once it has generated). */
  synthesisTimeoutMs?: number;
  /** Longest silence between two body chunks of a whole-audio answer. */
  bodyTimeoutMs?: number;
  /** Time to the headers of a stream, and longest silence between two of its chunks. */
  streamReadTimeoutMs?: number;
  /** Time for a voice catalogue read (headers and body). */
  voiceTimeoutMs?: number;
  /** Largest audio accepted from the upstream, whole or streamed. */
  maxAudioBytes?: number;
  /** Wait suggested after a 429/5xx that carries no Retry-After. */
  retryBaseMs?: number;
  voiceCacheEntries?: number;
  voiceCacheTtlMs?: number;
}

type Timeouts = Required<Omit<ElevenLabsAudioOptions, 'apiKey' | 'baseUrl'>>;

const DEFAULTS: Timeouts = {
  connections: 32,
  connectTimeoutMs: 10_000,
  synthesisTimeoutMs: 120_000,
  bodyTimeoutMs: 30_000,
  streamReadTimeoutMs: 15_000,
  voiceTimeoutMs: 10_000,
  maxAudioBytes: 32 * 1024 * 1024,
  retryBaseMs: 2_000,
  voiceCacheEntries: 1_000,
  voiceCacheTtlMs: 5 * 60_000,
};

/** An error body is read only this far (the reason is ours anyway). */
const MAX_ERROR_BYTES = 64 * 1024;
/** Voice catalogue answers are JSON pages of at most 100 voices. */
const MAX_CATALOGUE_BYTES = 4 * 1024 * 1024;
/** ElevenLabs voice ids are short alphanumeric strings; anything else is unknown without asking. */
const VOICE_ID = /^[A-Za-z0-9_-]{1,64}$/;

interface UpstreamRequest {
  path: string;
  body: ElevenLabsSpeechBody | ElevenLabsDialogueBody;
  inputCharacters: number;
}

/**
 * The live `elevenlabs` audio adapter (upstreams.md §2): text-to-speech, text-to-dialogue and
 * the speech stream on one pooled undici client, and the voice catalogue (shared library and
 * the account's premade voices). Generations are never retried here — the runner decides, and
 * an answer lost after the request left is `uncertain`, never resent. Upstream messages do not
 * reach clients: every failure carries one of our fixed reasons.
 */
@ProviderAdapterFor(AUDIO_CAPABILITY)
export class ElevenLabsAudioAdapter implements AudioProvider {
  readonly name = 'elevenlabs';
  readonly live = true;
  readonly models = AUDIO_MODEL_IDS;
  readonly reconcileDelayMs = 30_000;
  /** ElevenLabs cannot look a generation up by our id: past this a lost answer fails, released. */
  readonly reconcileGiveUpMs = 10 * 60_000;
  readonly circuit = new CircuitBreaker(5, 30_000);
  private readonly settings: Timeouts;
  private readonly pool: Pool;
  private readonly pathPrefix: string;
  private readonly voiceCache: TtlLruCache<VoiceInfo | null>;
  /** The official premade voices (`listVoices`), kept as long as a cached voice. */
  private premade: { voices: VoiceInfo[]; until: number } | undefined;

  constructor(private readonly options: ElevenLabsAudioOptions) {
    this.settings = { ...DEFAULTS, ...stripUndefined(options) };
    const url = new URL(options.baseUrl);
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: this.settings.connections,
      keepAliveTimeout: 10_000,
      connect: { timeout: this.settings.connectTimeoutMs },
    });
    this.voiceCache = new TtlLruCache(this.settings.voiceCacheEntries, this.settings.voiceCacheTtlMs);
  }

  /** Built without a key when ELEVENLABS_API_KEY is unset, so that routing can tell. */
  credentialled(): boolean {
    return this.options.apiKey !== '';
  }

  available(): boolean {
    return !this.circuit.isOpen;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** The upstream path and snake_case body of a generation, or why it cannot be sent. */
  buildRequest(spec: SpeechJobSpec, stream = false): UpstreamRequest | { refusal: string } {
    const common = {
      ...(spec.languageCode !== undefined && { language_code: spec.languageCode }),
      ...(spec.seed !== undefined && { seed: spec.seed }),
      ...(spec.applyTextNormalization !== undefined && { apply_text_normalization: spec.applyTextNormalization }),
    };
    const query = `output_format=${encodeURIComponent(spec.outputFormat)}`;
    const inputCharacters = spec.inputs.reduce((sum, input) => sum + input.text.length, 0);
    if (spec.mode === 'text_to_dialogue') {
      const model = ELEVENLABS_DIALOGUE_MODELS[spec.model];
      if (!model || stream) return { refusal: `${spec.model} cannot speak a dialogue${stream ? ' as a stream' : ''}` };
      const inputs = spec.inputs.map((input) => ({ text: input.text, voice_id: input.voiceId }));
      return { path: `${this.pathPrefix}/v1/text-to-dialogue?${query}`, body: { inputs, model_id: model, ...common }, inputCharacters };
    }
    const [input] = spec.inputs;
    if (!input || spec.inputs.length !== 1) return { refusal: 'speech takes exactly one input' };
    const path = `${this.pathPrefix}/v1/text-to-speech/${encodeURIComponent(input.voiceId)}${stream ? '/stream' : ''}?${query}`;
    return { path, body: { text: input.text, model_id: ELEVENLABS_SPEECH_MODELS[spec.model], ...common }, inputCharacters };
  }

  async synthesize(spec: SpeechJobSpec): Promise<SynthesisOutcome> {
    const request = this.buildRequest(spec);
    if ('refusal' in request) return { kind: 'rejected', reason: request.refusal, retryable: false };
    let response: Dispatcher.ResponseData;
    try {
      response = await this.post(request, this.settings.synthesisTimeoutMs, this.settings.bodyTimeoutMs);
    } catch (error) {
      return this.transportOutcome(error);
    }
    if (response.statusCode !== 200) return this.refusedBy(response);
    const billed = billedCharacters(response.headers) ?? request.inputCharacters;
    const cap = this.settings.maxAudioBytes;
    let read: { bytes: Buffer; overflow: boolean };
    try {
      if (declaresMoreThan(response.headers, cap)) {
        response.body.destroy();
        read = { bytes: Buffer.alloc(0), overflow: true };
      } else {
        read = await readBounded(response.body, cap);
      }
    } catch (error) {
      // The upstream generated (and billed) the audio, and we lost it on the way: never resend.
      this.circuit.failure();
      return { kind: 'uncertain', reason: `the speech upstream's answer was cut off (${classifyTransportError(error).code})` };
    }
    this.circuit.success();
    if (read.overflow) {
      return { kind: 'rejected', reason: `the speech upstream's audio is larger than allowed (${cap} bytes)`, retryable: false, billableCharacters: billed };
    }
    if (read.bytes.length === 0) return { kind: 'rejected', reason: 'the speech upstream returned no audio', retryable: false, billableCharacters: billed };
    return { kind: 'succeeded', audio: read.bytes, billableCharacters: billed };
  }

  async stream(spec: SpeechJobSpec): Promise<StreamOutcome> {
    const request = this.buildRequest(spec, true);
    if ('refusal' in request) return { kind: 'rejected', reason: request.refusal, retryable: false };
    let response: Dispatcher.ResponseData;
    try {
      response = await this.post(request, this.settings.streamReadTimeoutMs, this.settings.streamReadTimeoutMs);
    } catch (error) {
      return this.transportOutcome(error);
    }
    if (response.statusCode !== 200) return this.refusedBy(response);
    this.circuit.success();
    const billed = billedCharacters(response.headers);
    return { kind: 'streaming', stream: { chunks: this.chunks(response.body, billed), billableCharacters: () => billed } };
  }

  /** The stream's body as chunks, bounded in bytes; a stall (undici's body timeout) or a cut → SpeechStreamError. */
  private async *chunks(body: Dispatcher.ResponseData['body'], billed: number | undefined): AsyncGenerator<Buffer> {
    const cap = this.settings.maxAudioBytes;
    let total = 0;
    try {
      for await (const chunk of body) {
        const buffer = chunk as Buffer;
        total += buffer.length;
        if (total > cap) throw new SpeechStreamError(`the speech stream is larger than allowed (${cap} bytes)`, billed);
        yield buffer;
      }
    } catch (error) {
      if (error instanceof SpeechStreamError) throw error;
      this.circuit.failure();
      throw new SpeechStreamError(`the speech stream broke (${classifyTransportError(error).code})`, billed);
    } finally {
      if (!body.destroyed) body.destroy();
    }
  }

  async recover(): Promise<RecoverOutcome> {
    // The reference has no lookup of a generation by a client id: the runner gives up after
    // reconcileGiveUpMs and releases the hold (docs/audio.md › Live adapter).
    return { kind: 'unknown' };
  }

  /**
   * The library as one list: the official premade voices that match the query first (a few dozen,
   * from `GET /v2/voices`; the shared library leaves them out, yet generation takes them), then
   * the shared library's. A page is cut from that list: the premade voices it covers, then the
   * shared voices from the matching offset (at most two upstream pages of the same size).
   */
  async listVoices(query: VoiceQuery): Promise<VoicePage> {
    const pageSize = Math.min(Math.max(Math.trunc(query.pageSize) || 1, 1), 30);
    const page = Math.max(Math.trunc(query.page) || 0, 0);
    const premade = (await this.premadeVoices()).filter((voice) => voiceMatches(voice, query));
    const start = page * pageSize;
    const own = premade.slice(start, start + pageSize);
    const offset = Math.max(0, start - premade.length);
    const wanted = pageSize - own.length;
    // Shared pages of `pageSize` holding the items [offset, offset + wanted); the first one always, for the total.
    const first = Math.floor(offset / pageSize);
    const last = wanted > 0 ? Math.floor((offset + wanted - 1) / pageSize) : first;
    const answers = await Promise.all([...new Set([first, last])].map((at) => this.sharedPage(query, at, pageSize)));
    const shared = answers.flatMap((answer) => answer.voices).slice(offset - first * pageSize, offset - first * pageSize + wanted);
    // Shared voices after this page: in the last page read beyond the ones taken, or on a later one.
    const lastRead = answers[answers.length - 1]!;
    const sharedMore = offset + wanted < last * pageSize + lastRead.voices.length || lastRead.hasMore;
    return {
      voices: [...own, ...shared].filter((voice) => voice.status === 'available' && voice.standardRate),
      hasMore: premade.length > start + pageSize || sharedMore,
      totalCount: premade.length + answers[0]!.totalCount,
    };
  }

  /** One page of `GET /v1/shared-voices` as VoiceInfo (custom-rate voices still in: the caller filters). */
  private async sharedPage(query: VoiceQuery, page: number, pageSize: number): Promise<VoicePage> {
    const answer = await this.getJson<ElevenLabsSharedVoicesPage>('/v1/shared-voices', sharedVoicesQuery({ ...query, page, pageSize }));
    const upstream = Array.isArray(answer?.voices) ? answer.voices : [];
    const voices = upstream.filter((voice) => typeof voice?.voice_id === 'string').map(fromSharedVoice);
    for (const voice of voices) this.voiceCache.set(voice.id, voice);
    const hasMore = answer?.has_more === true;
    return { voices, hasMore, totalCount: typeof answer?.total_count === 'number' ? answer.total_count : page * pageSize + upstream.length + (hasMore ? 1 : 0) };
  }

  /** The account's premade (official) voices, read at most once per cache lifetime. */
  private async premadeVoices(): Promise<VoiceInfo[]> {
    const cached = this.premade;
    if (cached && cached.until > Date.now()) return cached.voices;
    const answer = await this.getJson<ElevenLabsVoicesPage>('/v2/voices', new URLSearchParams({ category: 'premade', page_size: '100' }));
    const voices = (Array.isArray(answer?.voices) ? answer.voices : [])
      .filter((voice) => typeof voice?.voice_id === 'string' && voice.category === 'premade')
      .map(fromAccountVoice);
    for (const voice of voices) this.voiceCache.set(voice.id, voice);
    this.premade = { voices, until: Date.now() + this.settings.voiceCacheTtlMs };
    return voices;
  }

  async getVoice(voiceId: string): Promise<VoiceInfo | null> {
    if (!VOICE_ID.test(voiceId)) return null;
    const cached = this.voiceCache.get(voiceId);
    if (cached !== undefined) return cached;
    const own = await this.getJson<ElevenLabsVoicesPage>('/v2/voices', new URLSearchParams({ voice_ids: voiceId }), true);
    const account = own?.voices?.find((voice) => voice?.voice_id === voiceId);
    let found: VoiceInfo | null = account?.category === 'premade' ? fromAccountVoice(account) : null;
    if (!found) {
      const params = new URLSearchParams({ search: voiceId, page_size: '30', page: '0', include_custom_rates: 'true' });
      const shared = await this.getJson<ElevenLabsSharedVoicesPage>('/v1/shared-voices', params);
      const library = shared?.voices?.find((voice) => voice?.voice_id === voiceId);
      // A voice of the gateway's own account that is not in the public library is private.
      found = library ? fromSharedVoice(library) : account ? fromAccountVoice(account) : null;
    }
    this.voiceCache.set(voiceId, found);
    return found;
  }

  async previewSample(): Promise<Buffer | null> {
    return null;
  }

  private post(request: UpstreamRequest, headersTimeout: number, bodyTimeout: number): Promise<Dispatcher.ResponseData> {
    return this.pool.request({
      path: request.path,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'audio/*', 'xi-api-key': this.options.apiKey },
      body: JSON.stringify(request.body),
      headersTimeout,
      bodyTimeout,
    });
  }

  /** No answer: refused-before-sending is safe to resend; anything later is a lost answer. */
  private transportOutcome(error: unknown): { kind: 'rejected'; reason: string; retryable: true; retryAfterMs: number } | { kind: 'uncertain'; reason: string } {
    this.circuit.failure();
    const { sent, code } = classifyTransportError(error);
    if (!sent) return { kind: 'rejected', reason: `the speech upstream could not be reached (${code})`, retryable: true, retryAfterMs: this.settings.retryBaseMs };
    return { kind: 'uncertain', reason: `the speech upstream's answer was lost (${code})` };
  }

  /** An answered error status → a rejection (with what the upstream billed, when it said). */
  private async refusedBy(response: Dispatcher.ResponseData): Promise<Extract<SynthesisOutcome, { kind: 'rejected' }>> {
    let text = '';
    try {
      text = (await readBounded(response.body, MAX_ERROR_BYTES)).bytes.toString('utf8');
    } catch {
      // the status decides; the body only refines the reason
    }
    const refusal = classifyRefusal(response.statusCode, text, response.headers['retry-after'], this.settings.retryBaseMs);
    this.record(refusal);
    const billed = billedCharacters(response.headers);
    return {
      kind: 'rejected',
      reason: refusal.reason,
      retryable: refusal.retryable,
      ...(refusal.retryAfterMs !== undefined && { retryAfterMs: refusal.retryAfterMs }),
      ...(billed !== undefined && { billableCharacters: billed }),
      ...(refusal.unhealthy && { unhealthy: true }),
    };
  }

  private record(refusal: UpstreamRefusal): void {
    if (refusal.unhealthy) this.circuit.failure();
    else this.circuit.success();
  }

  /**
   * A catalogue read (safe to repeat): one retry after a transport failure, a 429 or a 5xx.
   * `missingIsEmpty`: a 404 or `voice_not_found` means "no such voice here", not a failure.
   */
  private async getJson<T>(path: string, params: URLSearchParams, missingIsEmpty = false): Promise<T | null> {
    let last = 'the voice catalogue could not be read';
    for (let attempt = 0; attempt < 2; attempt++) {
      let response: Dispatcher.ResponseData;
      let read: { bytes: Buffer; overflow: boolean };
      try {
        response = await this.pool.request({
          path: `${this.pathPrefix}${path}?${params.toString()}`,
          method: 'GET',
          headers: { accept: 'application/json', 'xi-api-key': this.options.apiKey },
          headersTimeout: this.settings.voiceTimeoutMs,
          bodyTimeout: this.settings.voiceTimeoutMs,
        });
        read = await readBounded(response.body, response.statusCode === 200 ? MAX_CATALOGUE_BYTES : MAX_ERROR_BYTES);
      } catch (error) {
        this.circuit.failure();
        last = `the voice catalogue could not be read (${classifyTransportError(error).code})`;
        continue;
      }
      const text = read.bytes.toString('utf8');
      if (response.statusCode === 200) {
        this.circuit.success();
        if (read.overflow) throw new VoiceCatalogueError('the voice catalogue answer is larger than allowed');
        const parsed = parseErrorBody(text) as T | null;
        if (parsed === null) throw new VoiceCatalogueError('the voice catalogue answer is not JSON');
        return parsed;
      }
      if (missingIsEmpty && (response.statusCode === 404 || detailStatus(parseErrorBody(text)) === 'voice_not_found')) {
        this.circuit.success();
        return null;
      }
      const refusal = classifyRefusal(response.statusCode, text, response.headers['retry-after'], this.settings.retryBaseMs);
      this.record(refusal);
      last = refusal.reason;
      if (!refusal.retryable) break;
    }
    throw new VoiceCatalogueError(last);
  }
}

/** What ElevenLabs billed: `x-character-count`, else `character-cost` (upstreams.md §2.7). */
export function billedCharacters(headers: Record<string, string | string[] | undefined>): number | undefined {
  for (const name of ['x-character-count', 'character-cost']) {
    const raw = headers[name];
    const value = Number(Array.isArray(raw) ? raw[0] : raw);
    if (raw !== undefined && Number.isInteger(value) && value >= 0) return value;
  }
  return undefined;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
