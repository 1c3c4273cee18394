/**
 * The live text adapter: Gemini `generateContent` and `streamGenerateContent?alt=sse` on a pooled
 * undici client with timeouts (UPSTREAM §1). Upstream errors become TextUpstreamError with the
 * HTTP status and the Google RPC status word; a stream that ends without its final chunk (no
 * finishReason) is an error too, so a cut stream is never mistaken for a complete answer.
 */
import { StringDecoder } from 'node:string_decoder';
import { Pool } from 'undici';
import { ProviderAdapterFor } from '../capabilities.js';
import { type GoogleErrorBody, parseGoogleError, retryAfterSeconds } from './gemini-errors.js';
import type { GeminiResponse } from './gemini-types.js';
import { TEXT_MODEL_IDS, upstreamModelId } from './gemini-types.js';
import { type TextCall, type TextProvider, TextUpstreamError } from './text-provider.js';

export interface GeminiTextAdapterOptions {
  apiKey: string;
  baseUrl: string;
  /** Connections kept to the upstream. */
  connections?: number;
  /** Time to the response headers (the whole answer for a unary call). */
  headersTimeoutMs?: number;
  /** Longest silence between two body chunks. */
  bodyTimeoutMs?: number;
  connectTimeoutMs?: number;
}

function upstreamError(status: number, text: string, retryAfter?: string | string[]): TextUpstreamError {
  const body = parseGoogleError(text);
  const message = body.error?.message ?? (text.slice(0, 500) || `upstream answered ${status}`);
  return new TextUpstreamError(status, body.error?.status ?? 'UNKNOWN', message, retryAfterSeconds(body, retryAfter));
}

function networkError(error: unknown, signal?: AbortSignal): Error {
  if (signal?.aborted) return error instanceof Error ? error : new Error(String(error));
  const code = (error as { code?: string }).code ?? '';
  if (code.includes('TIMEOUT')) return new TextUpstreamError(504, 'DEADLINE_EXCEEDED', `upstream timed out (${code})`);
  return new TextUpstreamError(0, 'UNAVAILABLE', `upstream unreachable: ${(error as Error).message ?? String(error)}`);
}

@ProviderAdapterFor('text')
export class GeminiTextAdapter implements TextProvider {
  readonly name = 'gemini';
  readonly live = true;
  readonly models = TEXT_MODEL_IDS;
  private readonly pool: Pool;
  private readonly pathPrefix: string;

  constructor(private readonly options: GeminiTextAdapterOptions) {
    const url = new URL(options.baseUrl);
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 128,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: options.headersTimeoutMs ?? 120_000,
      bodyTimeout: options.bodyTimeoutMs ?? 120_000,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
    });
  }

  /** Built without a key when GEMINI_API_KEY is unset, so that routing can tell. */
  credentialled(): boolean {
    return this.options.apiKey !== '';
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private path(call: TextCall, method: 'generateContent' | 'streamGenerateContent'): string {
    const base = `${this.pathPrefix}/v1beta/models/${encodeURIComponent(upstreamModelId(call.model))}:${method}`;
    return method === 'streamGenerateContent' ? `${base}?alt=sse` : base;
  }

  private async send(call: TextCall, method: 'generateContent' | 'streamGenerateContent') {
    try {
      return await this.pool.request({
        method: 'POST',
        path: this.path(call, method),
        headers: { 'content-type': 'application/json', 'x-goog-api-key': this.options.apiKey, accept: method === 'generateContent' ? 'application/json' : 'text/event-stream' },
        body: JSON.stringify(call.request),
        signal: call.signal,
      });
    } catch (error) {
      throw networkError(error, call.signal);
    }
  }

  async generate(call: TextCall): Promise<GeminiResponse> {
    const response = await this.send(call, 'generateContent');
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw networkError(error, call.signal);
    }
    if (response.statusCode !== 200) throw upstreamError(response.statusCode, text, response.headers['retry-after']);
    try {
      return JSON.parse(text) as GeminiResponse;
    } catch {
      throw new TextUpstreamError(502, 'UNKNOWN', 'upstream answered with a body that is not JSON');
    }
  }

  async stream(call: TextCall): Promise<AsyncIterable<GeminiResponse[]>> {
    const response = await this.send(call, 'streamGenerateContent');
    if (response.statusCode !== 200) {
      let text = '';
      try {
        text = await response.body.text();
      } catch {
        // the error status is what matters
      }
      throw upstreamError(response.statusCode, text, response.headers['retry-after']);
    }
    const body = response.body;
    const signal = call.signal;
    return (async function* () {
      let buffer = '';
      let finished = false;
      // One decoder for the whole body: a character split across two reads is decoded once, whole.
      const decoder = new StringDecoder('utf8');
      const eventEnd = new RegExp(EVENT_END, 'g');
      try {
        for await (const raw of body) {
          buffer += decoder.write(raw as Buffer);
          // Every complete event of this read, found from a moving index: the rest is sliced off
          // once. They are yielded together.
          const events: GeminiResponse[] = [];
          let start = 0;
          eventEnd.lastIndex = 0;
          try {
            // `test`, not `exec`: no match array per event. The blank line that matched ends at
            // lastIndex: `\r\n\r\n` if those are its last four characters, else `\n\n` or `\r\r`.
            while (eventEnd.test(buffer)) {
              const end = eventEnd.lastIndex;
              const block = buffer.slice(start, end - (buffer.startsWith('\r\n\r\n', end - 4) ? 4 : 2));
              start = end;
              const event = parseSseBlock(block);
              if (event === null) continue;
              if (event.candidates?.[0]?.finishReason || event.promptFeedback?.blockReason) finished = true;
              events.push(event);
            }
          } catch (error) {
            // An event the upstream broke: the ones before it in this read still reach the caller first.
            if (events.length > 0) yield events;
            throw error;
          }
          if (start > 0) buffer = buffer.slice(start);
          if (events.length > 0) yield events;
          // A bare JSON error body mid-stream (the js SDK checks raw chunks for it).
          const pending = buffer.trimStart();
          if (pending.startsWith('{"error"') || pending.startsWith('{\n  "error"')) {
            const parsed = tryParse(buffer.trim()) as GoogleErrorBody | null;
            if (parsed?.error) throw upstreamError(parsed.error.code ?? 500, buffer.trim());
          }
        }
        buffer += decoder.end();
        const rest = parseSseBlock(buffer);
        if (rest) {
          if (rest.candidates?.[0]?.finishReason || rest.promptFeedback?.blockReason) finished = true;
          yield [rest];
        }
      } catch (error) {
        if (error instanceof TextUpstreamError || signal?.aborted) throw error;
        throw new TextUpstreamError(0, 'STREAM_INTERRUPTED', `the upstream stream broke: ${(error as Error).message ?? String(error)}`);
      } finally {
        if (!body.destroyed) body.destroy();
      }
      if (!finished) throw new TextUpstreamError(0, 'STREAM_INTERRUPTED', 'the upstream stream ended before its final chunk');
    })();
  }
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The end of an SSE event: a blank line, in any of the three line-ending styles. */
const EVENT_END = /\r\n\r\n|\n\n|\r\r/;

/** The `data:` lines of an SSE block, joined: a one-line block (what Gemini sends) without splitting. */
function dataOf(block: string): string {
  if (block.startsWith('data:') && !block.includes('\n') && !block.includes('\r')) return block.charCodeAt(5) === 32 ? block.slice(6) : block.slice(5);
  return block
    .split(/\r\n|\n|\r/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n');
}

/** One SSE block → the GenerateContentResponse in its `data:` lines (null for comments/empty). */
function parseSseBlock(block: string): GeminiResponse | null {
  const data = dataOf(block);
  if (data.trim() === '') return null;
  const parsed = tryParse(data) as (GeminiResponse & GoogleErrorBody) | null;
  if (parsed === null) throw new TextUpstreamError(502, 'UNKNOWN', 'upstream sent an SSE event that is not JSON');
  if (parsed.error) throw upstreamError(parsed.error.code ?? 500, data);
  return parsed;
}
