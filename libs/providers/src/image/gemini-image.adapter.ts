/**
 * The live image adapter: Gemini `generateContent` on an image model (UPSTREAM §1.13) through a
 * pooled undici client with timeouts and a cap on the answer's size. The request is the prompt
 * text part plus each reference as `inlineData`, with `responseModalities: ["TEXT","IMAGE"]` and
 * `imageConfig`; the answer's first non-thought inline image is the result
 * (gemini-image-answer.ts). Never rejects: every error is an outcome.
 */
import { Pool } from 'undici';
import { readBounded } from '../audio/bounded-body.js';
import { ProviderAdapterFor } from '../capabilities.js';
import { parseGoogleError, retryAfterSeconds } from '../text/gemini-errors.js';
import type { GeminiPart, GeminiRequest, GeminiResponse } from '../text/gemini-types.js';
import { CircuitBreaker } from '../video/circuit-breaker.js';
import { readImageAnswer } from './gemini-image-answer.js';
import { IMAGE_CAPABILITY, IMAGE_MODEL_IDS, type ImageGenerationRequest, type ImageOutcome, type ImageProvider } from './image-provider.js';
import { GEMINI_IMAGE_MODELS } from './image-models.js';

export interface GeminiImageAdapterOptions {
  apiKey: string;
  baseUrl: string;
  connections?: number;
  /** Time to the response headers: the whole generation (a 4K picture takes about a minute). */
  headersTimeoutMs?: number;
  /** Longest silence between two body chunks. */
  bodyTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Largest answer read (base64 of a 4K PNG plus text); a larger one is a failure. */
  maxResponseBytes?: number;
  /** Consecutive upstream failures (5xx, network, timeouts) that open the circuit, and for how long. */
  circuit?: CircuitBreaker;
}

/** A 4K PNG is up to ~30 MB, ~40 MB in base64. */
export const DEFAULT_MAX_IMAGE_RESPONSE_BYTES = 64 * 1024 * 1024;

@ProviderAdapterFor(IMAGE_CAPABILITY)
export class GeminiImageAdapter implements ImageProvider {
  readonly name = 'gemini-image';
  readonly live = true;
  readonly models = IMAGE_MODEL_IDS;
  private readonly pool: Pool;
  private readonly pathPrefix: string;
  private readonly circuit: CircuitBreaker;
  private readonly maxResponseBytes: number;

  constructor(private readonly options: GeminiImageAdapterOptions) {
    const url = new URL(options.baseUrl);
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 64,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: options.headersTimeoutMs ?? 180_000,
      bodyTimeout: options.bodyTimeoutMs ?? 60_000,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
    });
    this.circuit = options.circuit ?? new CircuitBreaker();
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_IMAGE_RESPONSE_BYTES;
  }

  /** Built without a key when GEMINI_API_KEY is unset, so that routing can tell. */
  credentialled(): boolean {
    return this.options.apiKey !== '';
  }

  available(): boolean {
    return !this.circuit.isOpen;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** The `generateContent` body for a request (exposed for tests and logs). */
  buildRequest(request: ImageGenerationRequest): GeminiRequest {
    const parts: GeminiPart[] = [];
    if (request.prompt) parts.push({ text: request.prompt });
    for (const reference of request.references) parts.push({ inlineData: { mimeType: reference.mimeType, data: reference.bytes.toString('base64') } });
    const body: GeminiRequest = {
      contents: [{ role: 'user', parts }],
      generationConfig: {
        ...request.generationConfig,
        responseModalities: ['TEXT', 'IMAGE'],
        // Without a ratio the upstream follows the reference images (its documented default).
        imageConfig: request.aspectRatio ? { aspectRatio: request.aspectRatio, imageSize: request.size } : { imageSize: request.size },
      },
    };
    if (request.safetySettings) body.safetySettings = request.safetySettings;
    return body;
  }

  async generate(request: ImageGenerationRequest): Promise<ImageOutcome> {
    const path = `${this.pathPrefix}/v1beta/models/${encodeURIComponent(GEMINI_IMAGE_MODELS[request.model])}:generateContent`;
    let statusCode: number;
    let headers: Record<string, string | string[] | undefined>;
    let bytes: Buffer;
    let overflow: boolean;
    try {
      const response = await this.pool.request({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-goog-api-key': this.options.apiKey },
        body: JSON.stringify(this.buildRequest(request)),
        signal: request.signal,
      });
      statusCode = response.statusCode;
      headers = response.headers;
      ({ bytes, overflow } = await readBounded(response.body, this.maxResponseBytes));
    } catch (error) {
      if (request.signal?.aborted) return { kind: 'failed', reason: 'the call was cancelled', retryable: true };
      this.circuit.failure();
      return networkFailure(error);
    }
    if (overflow) {
      // The upstream answered; retrying would likely give as large an answer again.
      return { kind: 'failed', reason: `the upstream answer exceeded ${this.maxResponseBytes} bytes`, retryable: false, status: statusCode };
    }
    const text = bytes.toString('utf8');
    if (statusCode !== 200) {
      if (statusCode >= 500) this.circuit.failure();
      return httpFailure(statusCode, text, headers['retry-after']);
    }
    this.circuit.success();
    let answer: GeminiResponse;
    try {
      answer = JSON.parse(text) as GeminiResponse;
    } catch {
      return { kind: 'failed', reason: 'the upstream answered with a body that is not JSON', retryable: true, status: 502 };
    }
    return readImageAnswer(answer);
  }
}

/** 429 and 5xx may succeed later (429 after its delay); other statuses will not as sent. */
function httpFailure(status: number, text: string, retryAfterHeader: string | string[] | undefined): ImageOutcome {
  const body = parseGoogleError(text);
  const rpc = body.error?.status ?? 'UNKNOWN';
  const message = body.error?.message ?? (text.slice(0, 500) || `upstream answered ${status}`);
  const retryable = status === 429 || status >= 500;
  const retryAfter = status === 429 ? retryAfterSeconds(body, retryAfterHeader) : undefined;
  return { kind: 'failed', reason: `${status} ${rpc}: ${message}`, retryable, status, ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}) };
}

function networkFailure(error: unknown): ImageOutcome {
  const code = (error as { code?: string }).code ?? '';
  if (code.includes('TIMEOUT')) return { kind: 'failed', reason: `the upstream timed out (${code})`, retryable: true, status: 504 };
  return { kind: 'failed', reason: `the upstream is unreachable: ${(error as Error).message ?? String(error)}`, retryable: true };
}
