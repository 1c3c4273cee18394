import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Agent, Pool, type Dispatcher } from 'undici';
import { ProviderAdapterFor } from '../capabilities.js';
import { CircuitBreaker } from './circuit-breaker.js';
import {
  type LookupOutcome,
  type PollOutcome,
  type PreparedAsset,
  type SubmitOutcome,
  type VideoGenerationRequest,
  type VideoJobSpec,
  type VideoOutputRef,
  type VideoProvider,
  VideoDownloadError,
} from './video-provider.js';
import { errorCode, parseJson } from '../upstream-errors.js';

/** Our public model ids → Google's long-running video models (see docs/decisions). */
export const GEMINI_VIDEO_MODELS: Record<string, string> = {
  'vendor-omni-1.1-flash-preview': 'veo-3.1-fast-generate-preview',
  'vendor-omni-flash-preview': 'veo-3.0-fast-generate-001',
};

export interface GeminiVideoOptions {
  apiKey: string;
  baseUrl: string;
  models?: Record<string, string>;
}

/** Timing knobs; tests shorten them. */
export interface GeminiVideoTuning {
  submitTimeoutMs: number;
  pollTimeoutMs: number;
  downloadTimeoutMs: number;
  /** First poll delay; doubles per poll up to `pollMaxMs`. */
  pollBaseMs: number;
  pollMaxMs: number;
  /** Default wait after a 429/5xx when the upstream gives no RetryInfo. */
  retryBaseMs: number;
  maxDownloadBytes: number;
}

const OPERATION_NAME = /^models\/[A-Za-z0-9._-]+\/operations\/[A-Za-z0-9._-]+$/;

/** undici error codes raised before any byte of the request could have been sent. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

interface GoogleError {
  error?: { code?: number; status?: string; message?: string; details?: Array<Record<string, unknown>> };
}

interface Operation {
  name?: string;
  done?: boolean;
  error?: { code?: number; message?: string };
  response?: {
    generateVideoResponse?: GenerateVideoResponse;
    generatedVideos?: GeneratedSample[];
  } & GenerateVideoResponse;
}

interface GeneratedSample {
  video?: { uri?: string; encodedVideo?: string; bytesBase64Encoded?: string; encoding?: string; mimeType?: string };
}

interface GenerateVideoResponse {
  generatedSamples?: GeneratedSample[];
  raiMediaFilteredCount?: number;
  raiMediaFilteredReasons?: string[];
}

/**
 * The live `gemini-video` adapter (upstreams.md §1.14): `predictLongRunning` to submit, operation
 * polling, then a download of the generated file. One pooled undici client per origin, timeouts
 * on every call, retries only where they are safe (the processor re-sends a submit only after
 * the upstream answered that it did not accept it), and upstream errors turned into clean
 * failure reasons — upstream message text never reaches a client.
 */
@ProviderAdapterFor('video')
export class GeminiVideoAdapter implements VideoProvider {
  readonly name = 'gemini-video';
  readonly live = true;
  readonly models: readonly string[];
  readonly reconcileDelayMs = 10_000;
  /** The Gemini API cannot look an operation up by our id: after this the task fails, released. */
  readonly reconcileGiveUpMs = 15 * 60_000;
  readonly circuit = new CircuitBreaker(5, 30_000);
  readonly tuning: GeminiVideoTuning = {
    submitTimeoutMs: 60_000,
    pollTimeoutMs: 20_000,
    downloadTimeoutMs: 300_000,
    pollBaseMs: 5_000,
    pollMaxMs: 20_000,
    retryBaseMs: 5_000,
    maxDownloadBytes: 1024 * 1024 * 1024,
  };
  private readonly base: URL;
  private readonly pool: Pool;
  private readonly agent = new Agent({ connections: 16, keepAliveTimeout: 10_000 });
  private readonly upstreamModels: Record<string, string>;

  constructor(private readonly options: GeminiVideoOptions) {
    this.base = new URL(options.baseUrl);
    this.pool = new Pool(this.base.origin, { connections: 32, keepAliveTimeout: 10_000, connect: { timeout: 10_000 } });
    this.upstreamModels = options.models ?? GEMINI_VIDEO_MODELS;
    this.models = Object.keys(this.upstreamModels);
  }

  /** Built without a key when GEMINI_API_KEY is unset, so that routing can tell. */
  credentialled(): boolean {
    return this.options.apiKey !== '';
  }

  available(): boolean {
    return !this.circuit.isOpen;
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.agent.close()]);
  }

  upstreamModel(model: string): string {
    const mapped = this.upstreamModels[model];
    if (!mapped) throw new Error(`no upstream model for ${model}`);
    return mapped;
  }

  buildSubmitBody(request: VideoGenerationRequest): Record<string, unknown> {
    const instance: Record<string, unknown> = { prompt: request.prompt };
    const image = (asset: PreparedAsset) =>
      asset.bytes ? { bytesBase64Encoded: asset.bytes.toString('base64'), mimeType: asset.mimeType } : { gcsUri: asset.uri, mimeType: asset.mimeType };
    const video = (asset: PreparedAsset) =>
      asset.bytes ? { bytesBase64Encoded: asset.bytes.toString('base64'), mimeType: asset.mimeType } : { uri: asset.uri };
    for (const asset of request.assets) {
      switch (asset.role) {
        case 'firstFrameImage':
          instance.image = image(asset);
          break;
        case 'lastFrameImage':
          instance.lastFrame = image(asset);
          break;
        case 'referenceImage':
          ((instance.referenceImages ??= []) as unknown[]).push({ image: image(asset), referenceType: 'asset' });
          break;
        case 'sourceVideo':
          instance.video = video(asset);
          break;
        case 'referenceVideo':
          ((instance.referenceVideos ??= []) as unknown[]).push({ video: video(asset) });
          break;
      }
    }
    return {
      instances: [instance],
      parameters: {
        aspectRatio: request.ratio,
        resolution: request.resolution,
        durationSeconds: upstreamDuration(request.durationSeconds),
        sampleCount: 1,
      },
    };
  }

  async submit(request: VideoGenerationRequest): Promise<SubmitOutcome> {
    const path = `${this.basePath()}/v1beta/models/${encodeURIComponent(this.upstreamModel(request.model))}:predictLongRunning`;
    let response: Dispatcher.ResponseData;
    try {
      response = await this.pool.request({
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': this.options.apiKey },
        body: JSON.stringify(this.buildSubmitBody(request)),
        headersTimeout: this.tuning.submitTimeoutMs,
        bodyTimeout: this.tuning.submitTimeoutMs,
      });
    } catch (error) {
      this.circuit.failure();
      const code = errorCode(error);
      if (NOT_SENT.has(code)) {
        return { kind: 'rejected', reason: 'the video upstream could not be reached', retryable: true, retryAfterMs: this.tuning.retryBaseMs };
      }
      return { kind: 'uncertain', reason: `the upstream's acceptance answer was lost (${code || 'network error'})` };
    }
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      this.circuit.failure();
      if (response.statusCode >= 200 && response.statusCode < 300) {
        return { kind: 'uncertain', reason: `the upstream's acceptance answer was cut off (${errorCode(error) || 'network error'})` };
      }
      return { kind: 'rejected', reason: describeHttpFailure(response.statusCode, null), retryable: isRetryableStatus(response.statusCode), retryAfterMs: this.tuning.retryBaseMs };
    }
    if (response.statusCode >= 200 && response.statusCode < 300) {
      const operation = parseJson<Operation>(text);
      if (operation?.name && OPERATION_NAME.test(operation.name)) {
        this.circuit.success();
        return { kind: 'accepted', operation: operation.name };
      }
      // A 2xx whose body we cannot read: it may well have been accepted.
      return { kind: 'uncertain', reason: 'the upstream accepted the request with an unreadable answer' };
    }
    const error = parseJson<GoogleError>(text);
    if (response.statusCode === 429 || response.statusCode >= 500) this.circuit.failure();
    // 502/504 may come from a gateway after the upstream accepted the job: not safe to resend.
    if (response.statusCode === 502 || response.statusCode === 504) {
      return { kind: 'uncertain', reason: `the upstream answered ${response.statusCode} without confirming acceptance` };
    }
    return {
      kind: 'rejected',
      reason: describeHttpFailure(response.statusCode, error),
      retryable: isRetryableStatus(response.statusCode) && !isDailyQuota(error),
      retryAfterMs: retryDelayMs(error, response.headers['retry-after']) ?? this.tuning.retryBaseMs,
    };
  }

  async lookup(): Promise<LookupOutcome> {
    // Google's long-running video API has no lookup by a client reference: the operation of a
    // lost answer cannot be found. The processor gives up after reconcileGiveUpMs (never resends).
    return { kind: 'unknown', retryAfterMs: 60_000 };
  }

  async poll(operation: string, _spec: VideoJobSpec, pollAttempt: number): Promise<PollOutcome> {
    if (!OPERATION_NAME.test(operation)) return { kind: 'failed', reason: 'the upstream operation name is malformed' };
    const backoff = Math.min(this.tuning.pollBaseMs * 2 ** Math.min(pollAttempt, 10), this.tuning.pollMaxMs);
    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      response = await this.pool.request({
        path: `${this.basePath()}/v1beta/${operation}`,
        method: 'GET',
        headers: { 'x-goog-api-key': this.options.apiKey },
        headersTimeout: this.tuning.pollTimeoutMs,
        bodyTimeout: this.tuning.pollTimeoutMs,
      });
      text = await response.body.text();
    } catch (error) {
      this.circuit.failure();
      return { kind: 'error', reason: `polling the upstream failed (${errorCode(error) || 'network error'})`, retryable: true, retryAfterMs: backoff };
    }
    if (response.statusCode === 404) return { kind: 'failed', reason: 'the upstream no longer knows the generation (operation not found)' };
    if (response.statusCode !== 200) {
      const error = parseJson<GoogleError>(text);
      if (response.statusCode === 429 || response.statusCode >= 500) this.circuit.failure();
      return {
        kind: 'error',
        reason: describeHttpFailure(response.statusCode, error),
        retryable: isRetryableStatus(response.statusCode),
        retryAfterMs: retryDelayMs(error, response.headers['retry-after']) ?? backoff,
      };
    }
    this.circuit.success();
    const op = parseJson<Operation>(text);
    if (!op) return { kind: 'error', reason: 'the upstream answered an unreadable operation', retryable: true, retryAfterMs: backoff };
    if (!op.done) return { kind: 'running', retryAfterMs: backoff };
    if (op.error) return { kind: 'failed', reason: describeOperationError(op.error.code) };
    const result = op.response?.generateVideoResponse ?? op.response;
    const samples = result?.generatedSamples ?? op.response?.generatedVideos ?? [];
    const video = samples[0]?.video;
    if (video?.uri) return { kind: 'succeeded', output: { uri: video.uri, mimeType: video.mimeType ?? video.encoding ?? 'video/mp4' } };
    const bytes = video?.encodedVideo ?? video?.bytesBase64Encoded;
    if (bytes) return { kind: 'succeeded', output: { base64: bytes, mimeType: video?.mimeType ?? video?.encoding ?? 'video/mp4' } };
    if ((result?.raiMediaFilteredCount ?? 0) > 0) {
      return { kind: 'failed', reason: "the request was blocked by the upstream's content-safety filters; change the prompt or media" };
    }
    return { kind: 'failed', reason: 'the upstream finished without returning a video' };
  }

  async download(output: VideoOutputRef, _spec: VideoJobSpec, destPath: string): Promise<{ bytes: number }> {
    if (output.base64) {
      const bytes = Buffer.from(output.base64, 'base64');
      const { writeFile } = await import('node:fs/promises');
      await writeFile(destPath, bytes);
      return { bytes: bytes.length };
    }
    if (!output.uri) throw new VideoDownloadError('the upstream returned no video location', false);
    let url = new URL(output.uri);
    for (let hop = 0; hop < 5; hop++) {
      if (url.protocol !== 'https:' && url.origin !== this.base.origin) throw new VideoDownloadError('the upstream video location is not https', false);
      // The key goes only to the upstream's own origin, never to a redirect target elsewhere.
      const headers: Record<string, string> = url.origin === this.base.origin ? { 'x-goog-api-key': this.options.apiKey } : {};
      let response: Dispatcher.ResponseData;
      try {
        const dispatcher: Dispatcher = url.origin === this.base.origin ? this.pool : this.agent;
        response = await dispatcher.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers,
          headersTimeout: this.tuning.downloadTimeoutMs,
          bodyTimeout: this.tuning.downloadTimeoutMs,
        });
      } catch (error) {
        throw new VideoDownloadError(`downloading the video failed (${errorCode(error) || 'network error'})`, true);
      }
      if ([301, 302, 303, 307, 308].includes(response.statusCode)) {
        await response.body.dump();
        const location = response.headers.location;
        if (typeof location !== 'string') throw new VideoDownloadError('the upstream redirected without a location', false);
        url = new URL(location, url);
        continue;
      }
      if (response.statusCode !== 200) {
        await response.body.dump();
        throw new VideoDownloadError(`downloading the video answered HTTP ${response.statusCode}`, isRetryableStatus(response.statusCode));
      }
      let written = 0;
      const cap = this.tuning.maxDownloadBytes;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          written += chunk.length;
          callback(written > cap ? new VideoDownloadError('the upstream video is larger than allowed', false) : null, chunk);
        },
      });
      try {
        await pipeline(response.body, counter, createWriteStream(destPath));
      } catch (error) {
        await unlink(destPath).catch(() => undefined);
        if (error instanceof VideoDownloadError) throw error;
        throw new VideoDownloadError(`downloading the video was interrupted (${errorCode(error) || 'network error'})`, true);
      }
      return { bytes: written };
    }
    throw new VideoDownloadError('the upstream redirected too many times', false);
  }

  private basePath(): string {
    return this.base.pathname.replace(/\/+$/, '');
  }
}

/** Veo returns a few fixed lengths; ask for the shortest one that covers the request. */
export function upstreamDuration(requested: number): number {
  if (requested <= 4) return 4;
  if (requested <= 6) return 6;
  return 8;
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 500 || status === 503 || status === 504 || status === 502;
}

function isDailyQuota(error: GoogleError | null): boolean {
  return (error?.error?.details ?? []).some((d) =>
    Array.isArray(d.violations) && (d.violations as Array<{ quotaId?: string }>).some((v) => /PerDay/i.test(v.quotaId ?? '')),
  );
}

function retryDelayMs(error: GoogleError | null, header: string | string[] | undefined): number | undefined {
  const info = (error?.error?.details ?? []).find((d) => typeof d['@type'] === 'string' && (d['@type'] as string).endsWith('google.rpc.RetryInfo'));
  const delay = typeof info?.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(info.retryDelay) : null;
  if (delay) return Math.min(Math.ceil(Number(delay[1]) * 1000), 300_000);
  const seconds = typeof header === 'string' ? Number(header) : NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, 300_000) : undefined;
}

/** A fixed sentence per upstream status (upstreams.md §1.9); the upstream's message is not passed on. */
export function describeHttpFailure(status: number, error: GoogleError | null): string {
  const rpc = error?.error?.status;
  if (status === 400 && rpc === 'FAILED_PRECONDITION') return 'the video upstream is not available for this account (failed precondition)';
  if (status === 400) return 'the video upstream refused the request as invalid';
  if (status === 401 || status === 403) return 'the video upstream refused access (credentials or permissions)';
  if (status === 404) return 'the video upstream does not know the requested model';
  if (status === 429) return isDailyQuota(error) ? 'the video upstream quota is exhausted for today' : 'the video upstream is rate limited; retries were exhausted';
  if (status >= 500) return `the video upstream failed (HTTP ${status}); retries were exhausted`;
  return `the video upstream answered HTTP ${status}`;
}

/** google.rpc.Code of a failed operation → a clean reason. */
export function describeOperationError(code: number | undefined): string {
  switch (code) {
    case 3:
      return 'the video upstream refused the request as invalid or unsafe; change the prompt or media';
    case 7:
      return 'the video upstream refused access to the model';
    case 8:
      return 'the video upstream ran out of capacity or quota';
    case 4:
      return 'the video upstream timed out generating the video';
    default:
      return 'the video upstream failed to generate the video';
  }
}
