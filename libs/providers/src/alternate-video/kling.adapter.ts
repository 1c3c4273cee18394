import { Pool, type Dispatcher } from 'undici';
import { type GuardedHttpClient, OutboundRequestError } from '../../../common/index.js';
import { ProviderAdapterFor } from '../capabilities.js';
import {
  ALTERNATE_VIDEO_CAPABILITY,
  ALTERNATE_VIDEO_MODEL_IDS,
  type AlternateCreateOutcome,
  type AlternateCreateRequest,
  AlternateDownloadError,
  type AlternateJobSpec,
  type AlternateQueryOutcome,
  type AlternateVideoProvider,
  parseAlternateTask,
} from './alternate-video-provider.js';
import { klingToken } from './kling-jwt.js';
import { errorCode, parseJson } from '../upstream-errors.js';

export interface KlingOptions {
  accessKey: string;
  secretKey: string;
  baseUrl: string;
  /** The guarded client the finished video is downloaded through (DESIGN §7). */
  http: GuardedHttpClient;
}

/** Timing knobs; tests shorten them. */
export interface KlingTuning {
  createTimeoutMs: number;
  queryTimeoutMs: number;
  downloadTimeoutMs: number;
  /** Lifetime of each JWT (short: a leaked token is soon useless). */
  tokenTtlSeconds: number;
  /** Polls: `pollBaseMs` doubled per poll up to `pollMaxMs`. */
  pollBaseMs: number;
  pollMaxMs: number;
  /** A create that could not be sent at all (connection refused, DNS) is tried this many times in all. */
  createAttempts: number;
  /** First lookup by `external_task_id` after a lost create answer. */
  reconcileDelayMs: number;
  /** A task never found by its `external_task_id` for this long fails (released, never re-created). */
  reconcileGiveUpMs: number;
}

/** undici error codes raised before any byte of the request could have been sent. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

interface KlingAnswer {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

/**
 * The live `kling` adapter (upstreams.md §3): a fresh short-lived JWT per request, create
 * text-to-video / image-to-video with our id as `external_task_id`, query by the upstream's
 * task id or by ours, download the MP4 through the guarded client. A create is re-sent only
 * when it never left (connection refused, DNS); an answer lost after sending is `uncertain`
 * (looked up by `external_task_id`, never re-sent). Upstream message text never reaches a client.
 */
@ProviderAdapterFor(ALTERNATE_VIDEO_CAPABILITY)
export class KlingAdapter implements AlternateVideoProvider {
  readonly name = 'kling';
  readonly live = true;
  readonly models = ALTERNATE_VIDEO_MODEL_IDS;
  readonly tuning: KlingTuning = {
    reconcileDelayMs: 5_000,
    reconcileGiveUpMs: 15 * 60_000,
    createTimeoutMs: 30_000,
    queryTimeoutMs: 15_000,
    downloadTimeoutMs: 300_000,
    tokenTtlSeconds: 300,
    pollBaseMs: 5_000,
    pollMaxMs: 30_000,
    createAttempts: 3,
  };
  private readonly base: URL;
  private readonly pool: Pool;

  constructor(private readonly options: KlingOptions) {
    this.base = new URL(options.baseUrl);
    this.pool = new Pool(this.base.origin, { connections: 16, keepAliveTimeout: 10_000, connect: { timeout: 10_000 } });
  }

  get reconcileDelayMs(): number {
    return this.tuning.reconcileDelayMs;
  }

  get reconcileGiveUpMs(): number {
    return this.tuning.reconcileGiveUpMs;
  }

  credentialled(): boolean {
    return this.options.accessKey !== '' && this.options.secretKey !== '';
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  token(): string {
    return klingToken(this.options.accessKey, this.options.secretKey, Date.now(), this.tuning.tokenTtlSeconds);
  }

  /** The create body (upstreams.md §3.2): `duration` is a string; image-to-video takes its ratio from the image. */
  buildCreateBody(request: AlternateCreateRequest): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model_name: request.model,
      prompt: request.prompt,
      mode: request.mode,
      duration: String(request.durationSeconds),
      external_task_id: request.taskId,
    };
    if (request.negativePrompt) body.negative_prompt = request.negativePrompt;
    if (request.kind === 'text2video') body.aspect_ratio = request.aspectRatio;
    if (request.imageBase64) body.image = request.imageBase64;
    if (request.imageTailBase64) body.image_tail = request.imageTailBase64;
    if (request.callbackUrl) body.callback_url = request.callbackUrl;
    return body;
  }

  async create(request: AlternateCreateRequest): Promise<AlternateCreateOutcome> {
    const body = JSON.stringify(this.buildCreateBody(request));
    for (let attempt = 1; ; attempt++) {
      let response: Dispatcher.ResponseData;
      try {
        response = await this.pool.request({
          path: `${this.basePath()}/v1/videos/${request.kind}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token()}` },
          body,
          headersTimeout: this.tuning.createTimeoutMs,
          bodyTimeout: this.tuning.createTimeoutMs,
        });
      } catch (error) {
        const code = errorCode(error);
        if (NOT_SENT.has(code)) {
          if (attempt < this.tuning.createAttempts) {
            await sleep(250 * attempt);
            continue;
          }
          return { kind: 'refused', upstreamCode: null, httpStatus: 503 };
        }
        return { kind: 'uncertain', reason: `the create answer was lost (${code || 'network error'})` };
      }
      let text: string;
      try {
        text = await response.body.text();
      } catch (error) {
        return { kind: 'uncertain', reason: `the create answer was cut off (${errorCode(error) || 'network error'})` };
      }
      const answer = parseJson<KlingAnswer>(text);
      const code = typeof answer?.code === 'number' ? answer.code : null;
      if (response.statusCode >= 200 && response.statusCode < 300) {
        const data = answer?.data as { task_id?: unknown } | undefined;
        if (code === 0 && data && (typeof data.task_id === 'string' || typeof data.task_id === 'number') && String(data.task_id) !== '') {
          return { kind: 'accepted', upstreamTaskId: String(data.task_id) };
        }
        if (code !== null && code !== 0) return { kind: 'refused', upstreamCode: code, httpStatus: response.statusCode };
        return { kind: 'uncertain', reason: 'the create answer could not be read' };
      }
      if (code !== null) return { kind: 'refused', upstreamCode: code, httpStatus: response.statusCode };
      // A gateway's 502/504 without Kling's body may follow an accepted create: look it up.
      if (response.statusCode === 502 || response.statusCode === 504) {
        return { kind: 'uncertain', reason: `the upstream answered ${response.statusCode} without confirming the create` };
      }
      return { kind: 'refused', upstreamCode: null, httpStatus: response.statusCode };
    }
  }

  query(spec: AlternateJobSpec, upstreamTaskId: string): Promise<AlternateQueryOutcome> {
    return this.get(spec, upstreamTaskId);
  }

  /** Kling reads the path value as a task id or an external task id (upstreams.md §3.3). */
  queryByExternalId(spec: AlternateJobSpec): Promise<AlternateQueryOutcome> {
    return this.get(spec, spec.taskId);
  }

  private async get(spec: AlternateJobSpec, id: string): Promise<AlternateQueryOutcome> {
    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      response = await this.pool.request({
        path: `${this.basePath()}/v1/videos/${spec.kind}/${encodeURIComponent(id)}`,
        method: 'GET',
        headers: { authorization: `Bearer ${this.token()}` },
        headersTimeout: this.tuning.queryTimeoutMs,
        bodyTimeout: this.tuning.queryTimeoutMs,
      });
      text = await response.body.text();
    } catch (error) {
      return { kind: 'error', reason: `querying the upstream failed (${errorCode(error) || 'network error'})`, retryable: true };
    }
    const answer = parseJson<KlingAnswer>(text);
    const code = typeof answer?.code === 'number' ? answer.code : null;
    if (response.statusCode === 200 && code === 0) {
      const task = parseAlternateTask(answer?.data);
      if (task) return { kind: 'found', task };
      return { kind: 'error', reason: 'the upstream answered an unreadable task', retryable: true };
    }
    if (response.statusCode === 404 || code === 1203) return { kind: 'not_found' };
    const retryable = response.statusCode === 429 || response.statusCode >= 500 || (code !== null && (code >= 1302 && code <= 1304 || code >= 5000));
    return { kind: 'error', reason: `the upstream query answered HTTP ${response.statusCode}${code === null ? '' : ` code ${code}`}`, retryable };
  }

  async download(videoUrl: string, _spec: AlternateJobSpec, destPath: string, maxBytes: number): Promise<{ bytes: number }> {
    let result;
    try {
      result = await this.options.http.download(videoUrl, destPath, { timeoutMs: this.tuning.downloadTimeoutMs, maxBytes });
    } catch (error) {
      if (error instanceof OutboundRequestError) {
        const retryable = error.reason === 'network' || error.reason === 'timeout' || error.reason === 'dns_failed';
        throw new AlternateDownloadError(`downloading the video failed (${error.reason})`, retryable);
      }
      throw error;
    }
    if (result.status !== 200) {
      const retryable = result.status === 429 || result.status >= 500;
      throw new AlternateDownloadError(`downloading the video answered HTTP ${result.status}`, retryable);
    }
    return { bytes: result.bytes };
  }

  pollDelayMs(_spec: AlternateJobSpec, pollAttempt: number): number {
    return Math.min(this.tuning.pollBaseMs * 2 ** Math.min(pollAttempt, 10), this.tuning.pollMaxMs);
  }

  private basePath(): string {
    return this.base.pathname.replace(/\/+$/, '');
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
