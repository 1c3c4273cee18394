import type { GeminiResponse } from '../../../libs/providers/index.js';
import { ChatAssembler, ResponsesAssembler, type TokenUsage } from './translation/gemini-to-openai.js';
import type { TranslatedTextRequest } from './translation/translated-request.js';

/**
 * One message to the client, before any framing: a Chat chunk (`data`), a Responses or error
 * event (`event`, framed with its type), or the Chat stream's end marker (`done`). SSE frames
 * them as `data:` / `event:` lines; another transport (a WebSocket) can send the payloads as they are.
 */
export type TextFrame =
  /** `json`, when given, is `JSON.stringify(payload)` already made (Chat content chunks: see ChatAssembler.contentChunkJson). */
  | { kind: 'data'; payload: unknown; json?: string }
  | { kind: 'event'; type: string; payload: unknown }
  | { kind: 'done' };

/**
 * The client-facing shapes of one operation (Chat-Completions-style or Responses-style), fed by
 * the use case's events. Transport-free: it says what to send, not how.
 */
export interface TextOutput {
  /** The answer's id (`chatcmpl-…`, `resp_…`), also the hold's subject. */
  readonly id: string;
  /** Once the upstream accepted the call (streams only). */
  start(): TextFrame[];
  /** One upstream chunk. */
  delta(chunk: GeminiResponse): TextFrame[];
  /** The upstream finished (`usage` event): the last output before the charge. */
  complete(): TextFrame[];
  /** After settlement: what ends a stream. */
  terminal(usage: TokenUsage): TextFrame[];
  /** A stream that cannot complete. */
  error(code: string, message: string): TextFrame;
  /** The whole answer of a call that did not stream. */
  body(usage: TokenUsage): Record<string, unknown>;
}

class ChatOutput implements TextOutput {
  private readonly chat: ChatAssembler;
  /** Only a stream sends the chunks: an unstreamed answer's are dropped, so their JSON is not made. */
  private readonly streamed: boolean;

  constructor(request: TranslatedTextRequest) {
    this.chat = new ChatAssembler(request.model, request.includeUsage);
    this.streamed = request.stream;
  }

  get id(): string {
    return this.chat.id;
  }

  start(): TextFrame[] {
    return [];
  }

  delta(chunk: GeminiResponse): TextFrame[] {
    const out = this.chat.push(chunk);
    if (!out) return [];
    return [this.streamed ? { kind: 'data', payload: out, json: this.chat.contentChunkJson(out) } : { kind: 'data', payload: out }];
  }

  complete(): TextFrame[] {
    return [];
  }

  terminal(usage: TokenUsage): TextFrame[] {
    // The spec's final usage chunk (empty `choices`) is always sent: a client that did not ask
    // with stream_options.include_usage still learns what it was charged for. OpenAI clients
    // accept a chunk with empty choices.
    return [{ kind: 'data', payload: this.chat.finishChunk() }, { kind: 'data', payload: this.chat.usageChunk(usage) }, { kind: 'done' }];
  }

  error(code: string, message: string): TextFrame {
    return { kind: 'event', type: 'error', payload: { error: { code, message } } };
  }

  body(usage: TokenUsage): Record<string, unknown> {
    return this.chat.completion(usage);
  }
}

class ResponsesOutput implements TextOutput {
  private readonly responses: ResponsesAssembler;

  constructor(request: TranslatedTextRequest) {
    this.responses = new ResponsesAssembler(request.model, request.echo);
  }

  get id(): string {
    return this.responses.id;
  }

  private static events(events: Array<{ type: string }>): TextFrame[] {
    return events.map((event) => ({ kind: 'event', type: event.type, payload: event }));
  }

  start(): TextFrame[] {
    return ResponsesOutput.events(this.responses.start());
  }

  delta(chunk: GeminiResponse): TextFrame[] {
    return ResponsesOutput.events(this.responses.push(chunk));
  }

  complete(): TextFrame[] {
    return ResponsesOutput.events(this.responses.finishItems());
  }

  terminal(usage: TokenUsage): TextFrame[] {
    return ResponsesOutput.events([this.responses.terminal(usage)]);
  }

  error(code: string, message: string): TextFrame {
    return { kind: 'event', type: 'error', payload: this.responses.error(code, message) };
  }

  body(usage: TokenUsage): Record<string, unknown> {
    return this.responses.response(this.responses.status, usage);
  }
}

/** The output of the request's operation. */
export function textOutputFor(request: TranslatedTextRequest): TextOutput {
  return request.operation === 'chat' ? new ChatOutput(request) : new ResponsesOutput(request);
}
