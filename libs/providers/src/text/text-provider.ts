import type { ProviderAdapter } from '../capabilities.js';
import type { GeminiRequest, GeminiResponse, TextModelId } from './gemini-types.js';

/**
 * What the text operations ask of an upstream: one Gemini-shaped generation, whole or streamed.
 * Both operations translate to and from the Gemini wire format (gemini-translation.ts), so a
 * provider only moves that format; the sandbox speaks it too.
 */
export interface TextCall {
  model: TextModelId;
  request: GeminiRequest;
  /** Aborting cancels the upstream call (a client that went away). */
  signal?: AbortSignal;
}

export interface TextProvider extends ProviderAdapter {
  generate(call: TextCall): Promise<GeminiResponse>;
  /**
   * Resolves once the upstream accepted the call (HTTP 200), so a refusal can still be answered
   * with a plain error status; then yields the chunks as they arrive, those that arrived together
   * (one read of the upstream's body) in one non-empty array, in order: each value crossing an
   * async iterator costs promises and microtasks, and an upstream read often carries many
   * chunks. Throws TextUpstreamError.
   */
  stream(call: TextCall): Promise<AsyncIterable<GeminiResponse[]>>;
}

/**
 * An upstream refusal or failure. `status` is the upstream's HTTP status (0 for a network
 * failure or a stream that ended without its final chunk); `upstreamStatus` is the Google RPC
 * status word (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`, …).
 */
export class TextUpstreamError extends Error {
  constructor(
    readonly status: number,
    readonly upstreamStatus: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'TextUpstreamError';
  }
}
