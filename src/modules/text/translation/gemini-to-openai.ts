/**
 * Gemini responses → the two operations' answers. One assembler per operation consumes Gemini
 * responses in order (a whole response, or each streamed chunk) and yields what the client
 * sees: Chat chunks / a Chat completion, Responses events / a Response. The synchronous answer
 * is built by the same code as the stream, so both carry the same ids, parts and signatures.
 *
 * Thought signatures and native call ids are copied from the upstream's parts as they are
 * (`providerMetadata.vendor.parts`, `extra_content.vendor`), never invented.
 */
import { randomBytes } from 'node:crypto';
import type { GeminiPart, GeminiResponse, GeminiUsage } from '../../../../libs/providers/index.js';

/** Random bytes for ids, drawn from the CSPRNG 4 KiB at a time (one call per ~340 ids, not one per id). */
const ID_POOL_BYTES = 4096;
let idPool = Buffer.alloc(0);
let idPoolOffset = 0;

function hex(bytes: number): string {
  if (idPoolOffset + bytes > idPool.length) {
    idPool = randomBytes(ID_POOL_BYTES);
    idPoolOffset = 0;
  }
  const text = idPool.toString('hex', idPoolOffset, idPoolOffset + bytes);
  idPoolOffset += bytes;
  return text;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
}

/** Billing view of Gemini usage: input = prompt + tool-use prompt; output = candidates + thoughts. */
export function tokenUsage(usage: GeminiUsage | undefined): TokenUsage {
  const u = usage ?? {};
  const thoughts = u.thoughtsTokenCount ?? 0;
  return {
    inputTokens: (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0),
    outputTokens: (u.candidatesTokenCount ?? 0) + thoughts,
    reasoningTokens: thoughts,
    cachedTokens: u.cachedContentTokenCount ?? 0,
  };
}

const CONTENT_FILTER = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION', 'LANGUAGE']);

/** Common bookkeeping of a Gemini response sequence (the use case keeps one for billing, each assembler one for its shapes). */
export class UpstreamTrack {
  usage: GeminiUsage | undefined;
  finishReason: string | undefined;
  blockReason: string | undefined;
  /** Characters of visible text and arguments produced so far (for partial charging). */
  producedChars = 0;
  chunks = 0;

  observe(response: GeminiResponse): GeminiPart[] {
    this.chunks++;
    if (response.usageMetadata) this.usage = response.usageMetadata;
    if (response.promptFeedback?.blockReason) this.blockReason = response.promptFeedback.blockReason;
    const candidate = response.candidates?.[0];
    if (candidate?.finishReason) this.finishReason = candidate.finishReason;
    const parts = candidate?.content?.parts ?? [];
    for (const part of parts) {
      if (typeof part.text === 'string') this.producedChars += part.text.length;
      if (part.functionCall) this.producedChars += JSON.stringify(part.functionCall.args ?? {}).length;
    }
    return parts;
  }

  /** Whether the upstream marked the end (a stream cut before this is incomplete). */
  get finished(): boolean {
    return this.finishReason !== undefined || this.blockReason !== undefined;
  }

  /** What was produced so far, for a stream that ended early: the upstream's counts, or an estimate. */
  partialUsage(estimatedInputTokens: number): TokenUsage {
    const usage = tokenUsage(this.usage);
    return {
      ...usage,
      inputTokens: usage.inputTokens || estimatedInputTokens,
      outputTokens: Math.max(usage.outputTokens, Math.ceil(this.producedChars / 4)),
    };
  }
}

const visibleText = (part: GeminiPart): string | null => (typeof part.text === 'string' && part.thought !== true ? part.text : null);

// ---------------------------------------------------------------------------------------------
// Chat-Completions-style

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  extra_content?: { vendor: { thought_signature?: string; function_call_id?: string } };
}

export class ChatAssembler {
  readonly id = `chatcmpl-${hex(12)}`;
  readonly created = Math.floor(Date.now() / 1000);
  readonly track = new UpstreamTrack();
  private text = '';
  private readonly parts: GeminiPart[] = [];
  private readonly toolCalls: ChatToolCall[] = [];
  private roleSent = false;

  constructor(
    readonly model: string,
    private readonly includeUsage = false,
  ) {}

  /** The JSON text of every content chunk before its delta, and after it: the same for the whole stream. */
  private jsonHead: string | null = null;
  private jsonTail = '';

  /**
   * `JSON.stringify(chunk)` of a content chunk `push` returned, byte for byte, with the constant
   * head (id, object, created, model) and tail serialized once per stream instead of once per
   * chunk: only the delta is serialized each time.
   */
  contentChunkJson(chunk: Record<string, unknown>): string {
    if (this.jsonHead === null) {
      // Cut from `chunk`'s own JSON with a null delta, so the shape is written in one place. The
      // last `"delta":null` is the delta's: only fixed keys follow it, and in the escaped strings
      // before it a quote is always preceded by a backslash.
      const template = JSON.stringify(this.chunk(null, null));
      const at = template.lastIndexOf('"delta":null') + '"delta":'.length;
      this.jsonHead = template.slice(0, at);
      this.jsonTail = template.slice(at + 'null'.length);
    }
    const [choice] = chunk.choices as Array<{ delta: Record<string, unknown> }>;
    return this.jsonHead + JSON.stringify(choice!.delta) + this.jsonTail;
  }

  private chunk(delta: Record<string, unknown> | null, finishReason: string | null): Record<string, unknown> {
    const chunk: Record<string, unknown> = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    if (this.includeUsage) chunk.usage = null;
    return chunk;
  }

  /** One upstream response (or stream chunk) → the chunk to send, if any. */
  push(response: GeminiResponse): Record<string, unknown> | null {
    const parts = this.track.observe(response);
    if (parts.length === 0) return null;
    const delta: Record<string, unknown> = {};
    if (!this.roleSent) {
      delta.role = 'assistant';
      this.roleSent = true;
    }
    let text = '';
    const calls: Array<ChatToolCall & { index: number }> = [];
    for (const part of parts) {
      this.parts.push(part);
      const visible = visibleText(part);
      if (visible !== null) text += visible;
      if (part.functionCall) {
        const call: ChatToolCall = {
          id: part.functionCall.id ?? `call_${hex(12)}`,
          type: 'function',
          function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
        };
        const vendor: { thought_signature?: string; function_call_id?: string } = {};
        if (part.thoughtSignature !== undefined) vendor.thought_signature = part.thoughtSignature;
        if (part.functionCall.id !== undefined) vendor.function_call_id = part.functionCall.id;
        if (Object.keys(vendor).length > 0) call.extra_content = { vendor };
        calls.push({ index: this.toolCalls.length, ...call });
        this.toolCalls.push(call);
      }
    }
    if (text) {
      this.text += text;
      delta.content = text;
    }
    if (calls.length > 0) delta.tool_calls = calls;
    delta.providerMetadata = { vendor: { parts } };
    return this.chunk(delta, null);
  }

  get finishReason(): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
    if (this.toolCalls.length > 0) return 'tool_calls';
    if (this.track.blockReason) return 'content_filter';
    const reason = this.track.finishReason;
    if (reason === 'MAX_TOKENS') return 'length';
    if (reason && CONTENT_FILTER.has(reason)) return 'content_filter';
    return 'stop';
  }

  /** The last content chunk: empty delta and the finish reason. */
  finishChunk(): Record<string, unknown> {
    const delta: Record<string, unknown> = {};
    if (!this.roleSent) {
      delta.role = 'assistant';
      delta.content = '';
      this.roleSent = true;
    }
    return this.chunk(delta, this.finishReason);
  }

  usageChunk(usage: TokenUsage): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: chatUsage(usage) };
  }

  completion(usage: TokenUsage): Record<string, unknown> {
    const message: Record<string, unknown> = {
      role: 'assistant',
      content: this.text === '' && this.toolCalls.length > 0 ? null : this.text,
      refusal: null,
    };
    if (this.toolCalls.length > 0) message.tool_calls = this.toolCalls;
    message.providerMetadata = { vendor: { parts: this.parts } };
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: this.finishReason }],
      usage: chatUsage(usage),
    };
  }
}

export function chatUsage(usage: TokenUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

// ---------------------------------------------------------------------------------------------
// Responses-style

interface MessageItem {
  kind: 'message';
  id: string;
  text: string;
  parts: GeminiPart[];
}

interface FunctionCallItem {
  kind: 'function_call';
  id: string;
  callId: string;
  name: string;
  arguments: string;
  parts: GeminiPart[];
}

type OutputItem = MessageItem | FunctionCallItem;

export type ResponsesEvent = Record<string, unknown> & { type: string };

export class ResponsesAssembler {
  readonly id = `resp_${hex(16)}`;
  readonly createdAt = Math.floor(Date.now() / 1000);
  readonly track = new UpstreamTrack();
  private sequence = 0;
  private readonly items: OutputItem[] = [];
  private open: OutputItem | null = null;

  constructor(
    readonly model: string,
    private readonly echo: Record<string, unknown>,
  ) {}

  private event(type: string, fields: Record<string, unknown>): ResponsesEvent {
    return { type, sequence_number: this.sequence++, ...fields };
  }

  /** `response.created` and `response.in_progress`. */
  start(): ResponsesEvent[] {
    const snapshot = this.response('in_progress', null);
    return [this.event('response.created', { response: snapshot }), this.event('response.in_progress', { response: snapshot })];
  }

  /** Appends `item` as the open one and announces it (`response.output_item.added` with `resource`); its output index. */
  private openItem(events: ResponsesEvent[], item: OutputItem, resource: Record<string, unknown>): number {
    const outputIndex = this.items.length;
    this.items.push(item);
    this.open = item;
    events.push(this.event('response.output_item.added', { output_index: outputIndex, item: resource }));
    return outputIndex;
  }

  private openMessage(events: ResponsesEvent[]): MessageItem {
    const item: MessageItem = { kind: 'message', id: `msg_${hex(16)}`, text: '', parts: [] };
    const outputIndex = this.openItem(events, item, { id: item.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] });
    events.push(
      this.event('response.content_part.added', {
        item_id: item.id,
        output_index: outputIndex,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      }),
    );
    return item;
  }

  private closeOpen(events: ResponsesEvent[]): void {
    const item = this.open;
    if (!item) return;
    this.open = null;
    const outputIndex = this.items.indexOf(item);
    if (item.kind === 'message') {
      const part = { type: 'output_text', text: item.text, annotations: [], logprobs: [] };
      events.push(
        this.event('response.output_text.done', { item_id: item.id, output_index: outputIndex, content_index: 0, text: item.text, logprobs: [] }),
        this.event('response.content_part.done', { item_id: item.id, output_index: outputIndex, content_index: 0, part }),
      );
    }
    events.push(this.event('response.output_item.done', { output_index: outputIndex, item: this.itemResource(item) }));
  }

  /** One upstream response (or stream chunk) → the events it causes. */
  push(response: GeminiResponse): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    for (const part of this.track.observe(response)) {
      if (part.functionCall) {
        this.closeOpen(events);
        const item: FunctionCallItem = {
          kind: 'function_call',
          id: `fc_${hex(16)}`,
          callId: part.functionCall.id ?? `call_${hex(12)}`,
          name: part.functionCall.name,
          arguments: JSON.stringify(part.functionCall.args ?? {}),
          parts: [part],
        };
        const outputIndex = this.openItem(events, item, {
          id: item.id,
          type: 'function_call',
          status: 'in_progress',
          call_id: item.callId,
          name: item.name,
          arguments: '',
        });
        events.push(
          this.event('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: item.arguments }),
          this.event('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, arguments: item.arguments, name: item.name }),
        );
        continue;
      }
      const visible = visibleText(part);
      if (visible) {
        const item = this.open?.kind === 'message' ? this.open : (this.closeOpen(events), this.openMessage(events));
        item.text += visible;
        item.parts.push(part);
        events.push(
          this.event('response.output_text.delta', {
            item_id: item.id,
            output_index: this.items.length - 1,
            content_index: 0,
            delta: visible,
            logprobs: [],
          }),
        );
        continue;
      }
      // Signature-only text, thoughts, code, results, inline bytes: kept with the current item.
      (this.open ?? this.openMessage(events)).parts.push(part);
    }
    return events;
  }

  /** Closes the last item (before settlement; the terminal event follows it). */
  finishItems(): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    this.closeOpen(events);
    return events;
  }

  get status(): 'completed' | 'incomplete' {
    const reason = this.track.finishReason;
    if (this.track.blockReason || reason === 'MAX_TOKENS' || (reason && CONTENT_FILTER.has(reason))) return 'incomplete';
    return 'completed';
  }

  private incompleteDetails(): Record<string, unknown> | null {
    if (this.status !== 'incomplete') return null;
    return { reason: this.track.finishReason === 'MAX_TOKENS' ? 'max_output_tokens' : 'content_filter' };
  }

  terminal(usage: TokenUsage): ResponsesEvent {
    const status = this.status;
    return this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: this.response(status, usage) });
  }

  error(code: string, message: string): ResponsesEvent {
    return this.event('error', { code, message, param: null, error: { code, message } });
  }

  private itemResource(item: OutputItem): Record<string, unknown> {
    const providerMetadata = { vendor: { parts: item.parts } };
    if (item.kind === 'message') {
      // The message the answer was cut in (output cap, content filter) is incomplete, like the response.
      const cut = item === this.items.at(-1) && this.status === 'incomplete';
      return {
        id: item.id,
        type: 'message',
        status: cut ? 'incomplete' : 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: item.text, annotations: [], logprobs: [] }],
        providerMetadata,
      };
    }
    return { id: item.id, type: 'function_call', status: 'completed', call_id: item.callId, name: item.name, arguments: item.arguments, providerMetadata };
  }

  response(status: 'in_progress' | 'completed' | 'incomplete', usage: TokenUsage | null): Record<string, unknown> {
    const output = status === 'in_progress' ? [] : this.items.map((item) => this.itemResource(item));
    const outputText = this.items.map((item) => (item.kind === 'message' ? item.text : '')).join('');
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAt,
      status,
      model: this.model,
      output,
      output_text: status === 'in_progress' ? '' : outputText,
      error: null,
      incomplete_details: status === 'incomplete' ? this.incompleteDetails() : null,
      ...this.echo,
      usage: usage ? responsesUsage(usage) : null,
      ...(status === 'in_progress' ? {} : { completed_at: Math.floor(Date.now() / 1000) }),
    };
  }
}

export function responsesUsage(usage: TokenUsage): Record<string, unknown> {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}
