/**
 * The sandbox text model: speaks the Gemini wire format in-process, deterministic, no account
 * needed. It answers with text derived from the input (streamed in several chunks with
 * realistic usage), calls a declared function with schema-valid arguments when tools are
 * allowed, and signs its calls with a thought signature that it verifies on the next turn the
 * way Gemini 3 does: a missing or altered signature in the current turn is a 400.
 *
 * Directives (DESIGN §4a): `[sandbox:fail]` (upstream 500 before any output),
 * `[sandbox:delay=<ms>]` (latency before each chunk), and, for text only,
 * `[sandbox:parallel=<n>]` (n parallel calls of the same function).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseSandboxDirectives, stripSandboxDirectives } from '../sandbox/directives.js';
import type { GeminiContent, GeminiPart, GeminiResponse, GeminiUsage, TextModelId } from './gemini-types.js';
import { upstreamModelId } from './gemini-types.js';
import { type TextCall, type TextProvider, TextUpstreamError } from './text-provider.js';

const SIGNING_KEY = 'sandbox-text-thought-signature-v1';
/** Gemini's documented "skip validation" signatures are honoured as upstream does. */
const DUMMY_SIGNATURES = new Set(['skip_thought_signature_validator', 'context_engineering_is_the_way_to_go']);
const THOUGHT_TOKENS: Record<string, number> = { MINIMAL: 0, LOW: 24, MEDIUM: 96, HIGH: 384 };
const PARALLEL = /\[sandbox:parallel=(\d{1,2})\]/;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export function sandboxSignature(model: string, call: { name: string; args?: unknown; id?: string }): string {
  const canonical = JSON.stringify([model, call.name, call.id ?? null, call.args ?? {}]);
  return createHmac('sha256', SIGNING_KEY).update(canonical).digest('base64');
}

function signatureMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A value valid for a (subset of) JSON schema, derived from a hint text. */
export function sampleFromSchema(schema: unknown, hint: string, depth = 0): unknown {
  if (!isObject(schema) || depth > 8) return hint;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('const' in schema) return schema.const;
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return sampleFromSchema(options[0], hint, depth + 1);
  }
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'null';
  if (typeof type === 'string') type = type.toLowerCase();
  if (type === undefined && isObject(schema.properties)) type = 'object';
  switch (type) {
    case 'object': {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : Object.keys(properties);
      const value: Json = {};
      for (const name of required) value[name] = sampleFromSchema(properties[name], hint, depth + 1);
      return value;
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 1;
      const max = typeof schema.maxItems === 'number' ? schema.maxItems : Math.max(min, 1);
      const count = Math.min(Math.max(min, 1), max);
      return Array.from({ length: count }, () => sampleFromSchema(schema.items, hint, depth + 1));
    }
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : undefined;
      const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
      let value = min ?? 1;
      if (max !== undefined && value > max) value = max;
      return type === 'integer' ? Math.ceil(value) : value;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default: {
      if (schema.format === 'date') return '2026-01-01';
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (schema.format === 'email') return 'sandbox@example.com';
      if (schema.format === 'uri' || schema.format === 'url') return 'https://example.com/';
      let text = hint || 'sandbox';
      if (typeof schema.maxLength === 'number') text = text.slice(0, schema.maxLength);
      if (typeof schema.minLength === 'number') text = text.padEnd(schema.minLength, 'x');
      return text;
    }
  }
}

const isToolResultContent = (content: GeminiContent) => content.role === 'user' && content.parts.length > 0 && content.parts.every((p) => p.functionResponse);

/** Index of the content that starts the current turn (Gemini 3's validation rule). */
function currentTurnStart(contents: GeminiContent[]): number {
  for (let i = contents.length - 1; i >= 0; i--) {
    const content = contents[i]!;
    if (content.role === 'user' && !isToolResultContent(content)) return i;
  }
  return 0;
}

function textOf(parts: GeminiPart[] | undefined): string {
  return (parts ?? []).map((p) => (typeof p.text === 'string' && !p.thought ? p.text : '')).join(' ');
}

function mediaCount(contents: GeminiContent[]): number {
  let count = 0;
  for (const content of contents) {
    for (const part of content.parts) {
      if (part.inlineData || part.fileData) count++;
      count += part.functionResponse?.parts?.length ?? 0;
    }
  }
  return count;
}

const approxTokens = (chars: number) => Math.max(1, Math.ceil(chars / 4));

/** JSON length of a request part with media bytes left out: media is counted per item (258 tokens), as Gemini does. */
const charsWithoutMedia = (value: unknown): number =>
  JSON.stringify(value ?? '', (key, child: unknown) => (key === 'inlineData' && child && typeof child === 'object' ? { mimeType: (child as { mimeType?: unknown }).mimeType } : child)).length;

interface Plan {
  parts: GeminiPart[];
  finishReason: string;
  promptTokens: number;
  thoughtsTokens: number;
  /** Text parts are split into chunks for streaming. */
  chunkTexts: string[];
  delayMs: number;
}

export class SandboxTextProvider implements TextProvider {
  async generate(call: TextCall): Promise<GeminiResponse> {
    const plan = this.plan(call);
    if (plan.delayMs > 0) await sleep(plan.delayMs, undefined, { signal: call.signal });
    const candidatesTokens = this.candidateTokens(plan.parts);
    return {
      candidates: [{ content: { role: 'model', parts: plan.parts }, finishReason: plan.finishReason, index: 0 }],
      usageMetadata: this.usage(plan, candidatesTokens),
      modelVersion: upstreamModelId(call.model),
      responseId: 'sandbox',
    };
  }

  async stream(call: TextCall): Promise<AsyncIterable<GeminiResponse>> {
    const plan = this.plan(call);
    const model = upstreamModelId(call.model);
    const chunks = this.chunks(plan);
    const usage = (candidates: number): GeminiUsage => this.usage(plan, candidates);
    const candidateTokens = (parts: GeminiPart[]) => this.candidateTokens(parts);
    return (async function* () {
      let produced: GeminiPart[] = [];
      for (let i = 0; i < chunks.length; i++) {
        if (plan.delayMs > 0) await sleep(plan.delayMs, undefined, { signal: call.signal });
        call.signal?.throwIfAborted();
        const last = i === chunks.length - 1;
        produced = [...produced, ...chunks[i]!];
        yield {
          candidates: [{ content: { role: 'model', parts: chunks[i]! }, index: 0, ...(last ? { finishReason: plan.finishReason } : {}) }],
          usageMetadata: usage(candidateTokens(produced)),
          modelVersion: model,
          responseId: 'sandbox',
        };
      }
    })();
  }

  private candidateTokens(parts: GeminiPart[]): number {
    let chars = 0;
    for (const part of parts) {
      if (typeof part.text === 'string') chars += part.text.length;
      if (part.functionCall) chars += JSON.stringify(part.functionCall).length;
      if (part.executableCode) chars += part.executableCode.code.length;
      if (part.codeExecutionResult) chars += part.codeExecutionResult.output?.length ?? 0;
    }
    return chars === 0 ? 0 : approxTokens(chars);
  }

  private usage(plan: Plan, candidatesTokens: number): GeminiUsage {
    return {
      promptTokenCount: plan.promptTokens,
      candidatesTokenCount: candidatesTokens,
      thoughtsTokenCount: plan.thoughtsTokens,
      totalTokenCount: plan.promptTokens + candidatesTokens + plan.thoughtsTokens,
    };
  }

  /** Splits the answer into several stream chunks: text in about five pieces, calls whole. */
  private chunks(plan: Plan): GeminiPart[][] {
    const chunks: GeminiPart[][] = [];
    for (const part of plan.parts) {
      if (typeof part.text === 'string' && part.text.length > 0 && !part.thought) {
        const words = part.text.split(/(?<=\s)/);
        const size = Math.max(1, Math.ceil(words.length / 5));
        for (let i = 0; i < words.length; i += size) chunks.push([{ text: words.slice(i, i + size).join('') }]);
        // The signature of a text answer arrives on a final empty-text part, as Gemini 3 streams it.
        if (part.thoughtSignature) chunks.push([{ text: '', thoughtSignature: part.thoughtSignature }]);
      } else {
        chunks.push([part]);
      }
    }
    if (chunks.length === 0) chunks.push([{ text: '' }]);
    return chunks;
  }

  private plan(call: TextCall): Plan {
    const { request, model } = call;
    const contents = request.contents;
    const allText = [textOf(request.systemInstruction?.parts), ...contents.map((c) => textOf(c.parts))].join(' ');
    const directives = parseSandboxDirectives(allText);
    if (directives.fail) throw new TextUpstreamError(500, 'INTERNAL', 'sandbox: the upstream failed ([sandbox:fail])');
    this.checkSignatures(model, contents);

    const config = request.generationConfig ?? {};
    const level = config.thinkingConfig?.thinkingLevel?.toUpperCase();
    const budget = config.thinkingConfig?.thinkingBudget;
    const cap = typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : Infinity;
    // Gemini counts thoughts and the answer against maxOutputTokens together.
    const thoughtsTokens = Math.min(cap, level ? (THOUGHT_TOKENS[level] ?? 96) : typeof budget === 'number' ? Math.max(0, Math.min(budget, 256)) : 96);
    const promptTokens = approxTokens(charsWithoutMedia(contents) + charsWithoutMedia(request.systemInstruction) + charsWithoutMedia(request.tools)) + 258 * mediaCount(contents);

    const last = contents[contents.length - 1];
    const turnStart = currentTurnStart(contents);
    const userText = stripSandboxDirectives(textOf(contents[turnStart]?.parts)).trim();
    const declarations = (request.tools ?? []).flatMap((t) => t.functionDeclarations ?? []);
    const computerUse = (request.tools ?? []).find((t) => t.computerUse);
    const codeExecution = (request.tools ?? []).some((t) => t.codeExecution);
    const fcc = request.toolConfig?.functionCallingConfig;
    const mode = fcc?.mode ?? 'AUTO';
    const toolsAllowed = mode !== 'NONE' && (declarations.length > 0 || computerUse !== undefined);
    const answeringToolResults = last ? isToolResultContent(last) : false;

    const plan = (parts: GeminiPart[], finishReason = 'STOP'): Plan => ({ parts, finishReason, promptTokens, thoughtsTokens, chunkTexts: [], delayMs: directives.delayMs });

    if (toolsAllowed && !answeringToolResults) {
      const allowed = fcc?.allowedFunctionNames;
      const declaration = declarations.find((d) => !allowed || allowed.includes(d.name));
      const name = declaration?.name ?? 'click_at';
      const schema = declaration ? (declaration.parametersJsonSchema ?? declaration.parameters) : undefined;
      const count = Math.max(1, Math.min(Number(PARALLEL.exec(allText)?.[1] ?? 1), 8));
      const parts: GeminiPart[] = [];
      for (let i = 0; i < count; i++) {
        const hint = count > 1 ? `${userText.slice(0, 40) || 'sandbox'} #${i + 1}` : userText.slice(0, 60) || 'sandbox';
        const args = declaration ? (sampleFromSchema(schema ?? { type: 'object' }, hint) as Json) : { x: 500, y: 500 };
        const functionCall = { id: `sbx${createHmac('sha256', SIGNING_KEY).update(`${hint}/${i}/${contents.length}`).digest('hex').slice(0, 12)}`, name, args };
        const part: GeminiPart = { functionCall };
        // Gemini 3: only the first call of a parallel set carries the signature.
        if (i === 0) part.thoughtSignature = sandboxSignature(model, functionCall);
        parts.push(part);
      }
      return plan(parts);
    }

    let answer: string;
    if (answeringToolResults) {
      const results = last!.parts.map((p) => `${p.functionResponse!.name} returned ${JSON.stringify(p.functionResponse!.response)}`);
      answer = `Sandbox ${model} used ${results.length} tool result${results.length === 1 ? '' : 's'}: ${results.join('; ')}.`;
    } else if (config.responseMimeType === 'application/json') {
      const schema = config.responseJsonSchema ?? config.responseSchema;
      answer = JSON.stringify(schema ? sampleFromSchema(schema, userText.slice(0, 60) || 'sandbox') : { answer: userText || 'sandbox' });
    } else {
      const words = userText.split(/\s+/).filter(Boolean);
      answer =
        `Sandbox ${model} answer. You wrote ${words.length} word${words.length === 1 ? '' : 's'}` +
        (words.length ? `, starting with "${words.slice(0, 8).join(' ')}"` : '') +
        `. This reply is deterministic and derived from your input, streamed in several chunks.`;
    }

    let finishReason = 'STOP';
    for (const stop of config.stopSequences ?? []) {
      const at = answer.indexOf(stop);
      if (at >= 0) answer = answer.slice(0, at);
    }
    const answerCap = cap - thoughtsTokens;
    if (answer.length > 0 && (answerCap <= 0 || approxTokens(answer.length) > answerCap)) {
      answer = answer.slice(0, Math.max(0, answerCap) * 4);
      finishReason = 'MAX_TOKENS';
    }
    const parts: GeminiPart[] = [];
    if (codeExecution && !answeringToolResults) {
      parts.push(
        { executableCode: { language: 'PYTHON', code: `print(len(${JSON.stringify(userText.slice(0, 40))}))` } },
        { codeExecutionResult: { outcome: 'OUTCOME_OK', output: `${userText.slice(0, 40).length}\n` } },
      );
    }
    parts.push({ text: answer, thoughtSignature: sandboxSignature(model, { name: '#text', args: answer }) });
    return plan(parts, finishReason);
  }

  /** Gemini 3's rule: in every step of the current turn, the first functionCall part carries a valid signature. */
  private checkSignatures(model: TextModelId, contents: GeminiContent[]): void {
    const start = currentTurnStart(contents);
    for (let i = start + 1; i < contents.length; i++) {
      const content = contents[i]!;
      if (content.role !== 'model') continue;
      const position = content.parts.findIndex((p) => p.functionCall);
      if (position < 0) continue;
      const part = content.parts[position]!;
      const fc = part.functionCall!;
      if (typeof part.thoughtSignature !== 'string') {
        throw new TextUpstreamError(
          400,
          'INVALID_ARGUMENT',
          `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly. Additional data, function call \`default_api:${fc.name}\`, position ${position + 1}.`,
        );
      }
      if (DUMMY_SIGNATURES.has(part.thoughtSignature)) continue;
      if (!signatureMatches(part.thoughtSignature, sandboxSignature(model, fc))) {
        throw new TextUpstreamError(400, 'INVALID_ARGUMENT', `Corrupted thought signature on function call \`${fc.name}\`, position ${position + 1}.`);
      }
    }
  }
}
