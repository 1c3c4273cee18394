/** Chat `messages` and Responses `input` → Gemini `contents` and the system instruction. */
import { DomainError } from '../../../../libs/common/index.js';
import type { GeminiContent, GeminiPart } from '../../../../libs/providers/index.js';
import { invalid, TextErrorCode } from '../text-errors.js';
import { isObject } from './json-readers.js';
import { contentParts } from './media-parts.js';
import { completeReplay, replayedParts } from './replayed-parts.js';
import { functionResponsePart, type KnownCall, parseArguments } from './tool-results.js';

export interface Conversation {
  contents: GeminiContent[];
  system: GeminiPart[];
  /** Role of the last non-system message, for the lite model's rule. */
  lastRole: string | null;
}

function pushUser(contents: GeminiContent[], parts: GeminiPart[], mergeToolResults: boolean): void {
  const last = contents[contents.length - 1];
  if (mergeToolResults && last?.role === 'user' && last.parts.every((p) => p.functionResponse)) {
    last.parts.push(...parts);
    return;
  }
  contents.push({ role: 'user', parts });
}

/**
 * The results of one model turn's calls, in the order of the calls, whatever order the client
 * sent them in (spec: results are matched by call id). Gemini pairs a response that has no
 * native id with its call by position: two parallel `get_weather` calls answered in reverse
 * order would otherwise swap results. Spec › Text: "return one result per call": a second result
 * for a call, or a later message while a call has none, is refused (OpenAI refuses both too).
 */
class ToolResults {
  private readonly orderOf = new Map<GeminiPart, number>();
  private calls = 0;
  /** Calls of the last model turn still waiting for their result, with the client's call id. */
  private readonly unanswered = new Map<KnownCall, string>();
  private readonly answered = new Set<KnownCall>();

  /** A new call (its client id) and its place among the conversation's calls. */
  expect(id: string, call: Omit<KnownCall, 'order'>): KnownCall {
    const known = { ...call, order: this.calls++ };
    this.unanswered.set(known, id);
    return known;
  }

  push(contents: GeminiContent[], call: KnownCall, part: GeminiPart, path: string): void {
    if (this.answered.has(call)) throw invalid(path, 'this call already has a result: send one result per call');
    this.answered.add(call);
    this.unanswered.delete(call);
    this.orderOf.set(part, call.order);
    pushUser(contents, [part], true);
  }

  /** Before a message that starts a new turn (user, or the model's next turn): every call so far has its result. */
  requireAnswered(path: string): void {
    for (const id of this.unanswered.values()) {
      throw new DomainError(400, TextErrorCode.InvalidField, `${path}: tool call ${JSON.stringify(id)} has no result; send one result per call before the next message`);
    }
  }

  /** Once the conversation is built: each run of results in the order of its calls (one sort per run). */
  order(contents: GeminiContent[]): void {
    if (this.orderOf.size < 2) return;
    for (const content of contents) {
      if (content.role !== 'user' || content.parts.length < 2 || !content.parts.every((part) => this.orderOf.has(part))) continue;
      content.parts.sort((a, b) => this.orderOf.get(a)! - this.orderOf.get(b)!);
    }
  }
}

export function chatConversation(messages: unknown): Conversation {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', 'must be an array with at least 1 item');
  const contents: GeminiContent[] = [];
  const system: GeminiPart[] = [];
  const calls = new Map<string, KnownCall>();
  const results = new ToolResults();
  let lastRole: string | null = null;

  messages.forEach((message, i) => {
    const path = `messages.${i}`;
    if (!isObject(message)) throw invalid(path, 'must be an object');
    const role = message.role;
    switch (role) {
      case 'system':
      case 'developer':
        system.push(...contentParts(message.content, `${path}.content`, true));
        return;
      case 'user': {
        results.requireAnswered(path);
        const parts = contentParts(message.content, `${path}.content`);
        if (parts.length === 0) throw invalid(`${path}.content`, 'must not be empty');
        contents.push({ role: 'user', parts });
        break;
      }
      case 'assistant': {
        results.requireAnswered(path);
        const toolCalls = message.tool_calls ?? [];
        if (!Array.isArray(toolCalls)) throw invalid(`${path}.tool_calls`, 'must be an array');
        const replayed = completeReplay(replayedParts(message, path), toolCalls.length, message.content);
        const parts: GeminiPart[] = [];
        if (!replayed && message.content !== undefined && message.content !== null) {
          for (const part of contentParts(message.content, `${path}.content`, true)) if (part.text) parts.push(part);
        }
        const replayedCalls = (replayed ?? []).filter((p) => isObject(p.functionCall));
        toolCalls.forEach((call, j) => {
          const callPath = `${path}.tool_calls.${j}`;
          if (!isObject(call)) throw invalid(callPath, 'must be an object');
          if (typeof call.id !== 'string' || call.id === '') throw invalid(`${callPath}.id`, 'must be a non-empty string');
          const fn = call.function;
          if (!isObject(fn) || typeof fn.name !== 'string') throw invalid(`${callPath}.function.name`, 'must be a string');
          const extra = isObject(call.extra_content) && isObject(call.extra_content.vendor) ? call.extra_content.vendor : {};
          const signature = typeof extra.thought_signature === 'string' ? extra.thought_signature : undefined;
          let nativeId = typeof extra.function_call_id === 'string' ? extra.function_call_id : undefined;
          if (nativeId === undefined) {
            const fromParts = replayedCalls[j]?.functionCall;
            if (fromParts && fromParts.name === fn.name && typeof fromParts.id === 'string') nativeId = fromParts.id;
          }
          if (calls.has(call.id)) throw invalid(`${callPath}.id`, `another tool call already has id ${JSON.stringify(call.id)}`);
          calls.set(call.id, results.expect(call.id, { name: fn.name, nativeId }));
          if (!replayed) {
            const part: GeminiPart = { functionCall: { name: fn.name, args: parseArguments(fn.arguments, `${callPath}.function.arguments`) } };
            if (nativeId !== undefined) part.functionCall!.id = nativeId;
            if (signature !== undefined) part.thoughtSignature = signature;
            parts.push(part);
          }
        });
        const finalParts = replayed ?? parts;
        if (finalParts.length > 0) contents.push({ role: 'model', parts: finalParts });
        break;
      }
      case 'tool': {
        if (typeof message.tool_call_id !== 'string') throw invalid(`${path}.tool_call_id`, 'must be a string');
        const call = calls.get(message.tool_call_id);
        if (!call) {
          throw new DomainError(400, TextErrorCode.UnknownToolCall, `${path}.tool_call_id: no earlier assistant tool call has id ${JSON.stringify(message.tool_call_id)}`);
        }
        results.push(contents, call, functionResponsePart(call, message.content, `${path}.content`), `${path}.tool_call_id`);
        break;
      }
      default:
        throw invalid(`${path}.role`, 'must be system, developer, user, assistant or tool');
    }
    lastRole = role as string;
  });
  results.order(contents);
  return { contents, system, lastRole };
}

export function responsesConversation(input: unknown, instructions: string | undefined): Conversation {
  const system: GeminiPart[] = instructions ? [{ text: instructions }] : [];
  if (typeof input === 'string') {
    if (input === '') throw invalid('input', 'must not be empty');
    return { contents: [{ role: 'user', parts: [{ text: input }] }], system, lastRole: 'user' };
  }
  if (!Array.isArray(input) || input.length === 0) throw invalid('input', 'must be a string or a non-empty array of items');
  const contents: GeminiContent[] = [];
  const calls = new Map<string, KnownCall>();
  const results = new ToolResults();
  let lastRole: string | null = null;
  /** Whether the last model content may take the next assistant-side item (one model turn). */
  let modelOpen = false;

  const pushModel = (parts: GeminiPart[], path: string) => {
    const last = contents[contents.length - 1];
    if (modelOpen && last?.role === 'model') last.parts.push(...parts);
    else {
      results.requireAnswered(path);
      contents.push({ role: 'model', parts });
    }
    modelOpen = true;
  };

  input.forEach((item, i) => {
    const path = `input.${i}`;
    if (!isObject(item)) throw invalid(path, 'must be an object');
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role;
      if (role === 'system' || role === 'developer') {
        system.push(...contentParts(item.content, `${path}.content`, true));
        return;
      }
      if (role === 'user') {
        results.requireAnswered(path);
        const parts = contentParts(item.content, `${path}.content`);
        if (parts.length === 0) throw invalid(`${path}.content`, 'must not be empty');
        contents.push({ role: 'user', parts });
        modelOpen = false;
      } else if (role === 'assistant') {
        const replayed = replayedParts(item, path);
        const parts = replayed ?? contentParts(item.content, `${path}.content`, true).filter((p) => p.text);
        if (parts.length > 0) pushModel(parts, path);
      } else {
        throw invalid(`${path}.role`, 'must be system, developer, user or assistant');
      }
      lastRole = role;
      return;
    }
    if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || item.call_id === '') throw invalid(`${path}.call_id`, 'must be a non-empty string');
      if (typeof item.name !== 'string') throw invalid(`${path}.name`, 'must be a string');
      const replayed = replayedParts(item, path);
      const replayedCall = replayed?.find((p) => isObject(p.functionCall))?.functionCall;
      const nativeId = replayedCall && replayedCall.name === item.name && typeof replayedCall.id === 'string' ? replayedCall.id : undefined;
      if (calls.has(item.call_id)) throw invalid(`${path}.call_id`, `another function_call item already has call_id ${JSON.stringify(item.call_id)}`);
      const parts = replayed ?? [{ functionCall: { name: item.name, args: parseArguments(item.arguments, `${path}.arguments`) } }];
      pushModel(parts, path);
      calls.set(item.call_id, results.expect(item.call_id, { name: item.name, nativeId }));
      lastRole = 'assistant';
      return;
    }
    if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') throw invalid(`${path}.call_id`, 'must be a string');
      const call = calls.get(item.call_id);
      if (!call) throw new DomainError(400, TextErrorCode.UnknownToolCall, `${path}.call_id: no earlier function_call item has call_id ${JSON.stringify(item.call_id)}`);
      results.push(contents, call, functionResponsePart(call, item.output, `${path}.output`), `${path}.call_id`);
      modelOpen = false;
      lastRole = 'tool';
      return;
    }
    if (type === 'reasoning') return; // never produced by this service; accepted and skipped
    throw invalid(`${path}.type`, `unsupported input item type ${JSON.stringify(type)}`);
  });
  results.order(contents);
  return { contents, system, lastRole };
}
