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
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import { parseSandboxDirectives, stripSandboxDirectives } from '../sandbox/directives.js';
import { ProviderAdapterFor, SANDBOX_ADAPTER } from '../capabilities.js';
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GeminiResponse, GeminiUsage, TextModelId } from './gemini-types.js';
import { MAX_OUTPUT_TOKENS, TEXT_MODEL_IDS, upstreamModelId } from './gemini-types.js';
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

/** Thrown inside a generation when its output budget is spent. */
class BudgetSpent extends Error {}

/** Characters written between two yields to the event loop (a few milliseconds of work). */
const YIELD_EVERY_CHARS = 16_384;

/**
 * Output text written up to a character budget: generation stops at the budget instead of
 * building a value and cutting it afterwards. When a piece does not fit, what fits is kept (the
 * cut-off prefix, as an upstream's output stops mid-token) and BudgetSpent is thrown.
 */
export class OutputBudget {
  private readonly pieces: string[] = [];
  private written = 0;
  private sinceYield = 0;
  spent = false;

  constructor(readonly limit: number) {}

  get remaining(): number {
    return this.limit - this.written;
  }

  write(piece: string): void {
    if (piece.length > this.remaining) {
      this.pieces.push(piece.slice(0, this.remaining));
      this.written = this.limit;
      this.spent = true;
      throw new BudgetSpent();
    }
    this.pieces.push(piece);
    this.written += piece.length;
    // Empty pieces still count: the work between two yields stays bounded.
    this.sinceYield += piece.length + 1;
  }

  /** True once every YIELD_EVERY_CHARS: the generation then lets other requests run. */
  dueForYield(): boolean {
    if (this.sinceYield < YIELD_EVERY_CHARS) return false;
    this.sinceYield = 0;
    return true;
  }

  text(): string {
    return this.pieces.join('');
  }
}

/** A generation: synchronous steps that yield where the event loop may run. */
type Generation = Generator<void, void, void>;

/** Runs a generation to its end or to its budget, giving the event loop a turn between slices. */
async function run(generation: Generation): Promise<void> {
  try {
    for (let step = generation.next(); !step.done; step = generation.next()) await yieldToEventLoop();
  } catch (error) {
    if (!(error instanceof BudgetSpent)) throw error;
  }
}

/**
 * Writes the JSON text of a value valid for a (subset of) JSON schema, derived from a hint
 * text, into `out`; stops when its budget is spent.
 */
function* writeSample(schema: unknown, hint: string, out: OutputBudget, depth = 0): Generation {
  if (out.dueForYield()) yield;
  if (!isObject(schema) || depth > 8) return out.write(JSON.stringify(hint));
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return out.write(JSON.stringify(schema.enum[0]) ?? 'null');
  if ('const' in schema) return out.write(JSON.stringify(schema.const) ?? 'null');
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return yield* writeSample(options[0], hint, out, depth + 1);
  }
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'null';
  if (typeof type === 'string') type = type.toLowerCase();
  if (type === undefined && isObject(schema.properties)) type = 'object';
  switch (type) {
    case 'object': {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as unknown[]).map(String) : Object.keys(properties);
      out.write('{');
      for (let i = 0; i < required.length; i++) {
        out.write(`${i > 0 ? ',' : ''}${JSON.stringify(required[i])}:`);
        yield* writeSample(properties[required[i]!], hint, out, depth + 1);
      }
      return out.write('}');
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 1;
      const max = typeof schema.maxItems === 'number' ? schema.maxItems : Math.max(min, 1);
      const count = Math.min(Math.max(min, 1), max);
      out.write('[');
      for (let i = 0; i < count; i++) {
        if (i > 0) out.write(',');
        yield* writeSample(schema.items, hint, out, depth + 1);
      }
      return out.write(']');
    }
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : undefined;
      const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
      let value = min ?? 1;
      if (max !== undefined && value > max) value = max;
      return out.write(JSON.stringify(type === 'integer' ? Math.ceil(value) : value));
    }
    case 'boolean':
      return out.write('true');
    case 'null':
      return out.write('null');
    default: {
      if (schema.format === 'date') return out.write('"2026-01-01"');
      if (schema.format === 'date-time') return out.write('"2026-01-01T00:00:00Z"');
      if (schema.format === 'email') return out.write('"sandbox@example.com"');
      if (schema.format === 'uri' || schema.format === 'url') return out.write('"https://example.com/"');
      let text = hint || 'sandbox';
      if (typeof schema.maxLength === 'number') text = text.slice(0, schema.maxLength);
      const quoted = JSON.stringify(text);
      out.write(quoted.slice(0, -1));
      // Padding up to minLength is written in slices, never built whole first.
      let padding = typeof schema.minLength === 'number' ? schema.minLength - text.length : 0;
      while (padding > 0) {
        const slice = Math.min(padding, YIELD_EVERY_CHARS);
        out.write('x'.repeat(slice));
        padding -= slice;
        if (out.dueForYield()) yield;
      }
      return out.write('"');
    }
  }
}

/**
 * The JSON text of a schema-valid value within `maxChars` characters; `complete` is false when
 * the budget ran out first (then `json` is the cut-off prefix, as Gemini's output at MAX_TOKENS).
 */
export async function sampleJson(schema: unknown, hint: string, maxChars: number): Promise<{ json: string; complete: boolean }> {
  const out = new OutputBudget(Math.max(0, maxChars));
  await run(writeSample(schema, hint, out));
  return { json: out.text(), complete: !out.spent };
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

/** Characters of a visible output part, as the usage counts them (4 per token). */
function outputChars(part: GeminiPart): number {
  let chars = 0;
  if (typeof part.text === 'string') chars += part.text.length;
  if (part.functionCall) chars += JSON.stringify(part.functionCall).length;
  if (part.executableCode) chars += part.executableCode.code.length;
  if (part.codeExecutionResult) chars += part.codeExecutionResult.output?.length ?? 0;
  return chars;
}

/** Writes a text that is already small (derived from a bounded part of the input). */
// eslint-disable-next-line require-yield
function* writeAll(out: OutputBudget, text: string): Generation {
  out.write(text);
}

/** The answer to a turn of tool results, one result after the other until the budget is spent. */
function* toolResultsAnswer(model: string, content: GeminiContent, out: OutputBudget): Generation {
  const results = content.parts;
  out.write(`Sandbox ${model} used ${results.length} tool result${results.length === 1 ? '' : 's'}: `);
  for (let i = 0; i < results.length; i++) {
    const fr = results[i]!.functionResponse!;
    out.write(`${i > 0 ? '; ' : ''}${fr.name} returned ${JSON.stringify(fr.response)}`);
    if (out.dueForYield()) yield;
  }
  out.write('.');
}

/**
 * Characters of text in a request part, as a tokenizer reads it: string values, not JSON
 * punctuation or keys, and no media bytes (media is counted per item, 258 tokens, as Gemini
 * does). The hold's input estimate counts the same characters at 3 per token, so the sandbox's
 * count (4 per token) never exceeds it.
 */
function textChars(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + textChars(item), 0);
  if (!isObject(value)) return 0;
  let chars = 0;
  for (const [key, child] of Object.entries(value)) {
    if (key !== 'inlineData' && key !== 'fileData' && key !== 'thoughtSignature') chars += textChars(child);
  }
  return chars;
}

interface Plan {
  parts: GeminiPart[];
  finishReason: string;
  promptTokens: number;
  thoughtsTokens: number;
  /**
   * Output tokens spent when the budget ran out (parts that did not fit whole were dropped, as
   * Gemini drops a call cut at MAX_TOKENS, but their tokens were generated); else undefined and
   * the parts are counted.
   */
  spentTokens?: number;
  delayMs: number;
}

/** An answer's output budget: thoughts first, the rest for the visible parts (Gemini counts both against maxOutputTokens). */
interface Budget {
  thoughtsTokens: number;
  answerTokens: number;
}

@ProviderAdapterFor('text')
export class SandboxTextProvider implements TextProvider {
  readonly name = SANDBOX_ADAPTER;
  readonly live = false;
  readonly models = TEXT_MODEL_IDS;

  credentialled(): boolean {
    return true;
  }

  async generate(call: TextCall): Promise<GeminiResponse> {
    const plan = await this.plan(call);
    if (plan.delayMs > 0) await sleep(plan.delayMs, undefined, { signal: call.signal });
    return {
      candidates: [{ content: { role: 'model', parts: plan.parts }, finishReason: plan.finishReason, index: 0 }],
      usageMetadata: this.usage(plan, plan.spentTokens ?? this.candidateTokens(plan.parts)),
      modelVersion: upstreamModelId(call.model),
      responseId: 'sandbox',
    };
  }

  async stream(call: TextCall): Promise<AsyncIterable<GeminiResponse[]>> {
    const plan = await this.plan(call);
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
        // One chunk per value: each comes after its own delay, as from an upstream that paces them.
        yield [
          {
            candidates: [{ content: { role: 'model', parts: chunks[i]! }, index: 0, ...(last ? { finishReason: plan.finishReason } : {}) }],
            usageMetadata: usage(last && plan.spentTokens !== undefined ? plan.spentTokens : candidateTokens(produced)),
            modelVersion: model,
            responseId: 'sandbox',
          },
        ];
      }
    })();
  }

  private candidateTokens(parts: GeminiPart[]): number {
    const chars = parts.reduce((sum, part) => sum + outputChars(part), 0);
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

  private budget(config: GeminiGenerationConfig): Budget {
    const cap = Math.min(typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : MAX_OUTPUT_TOKENS, MAX_OUTPUT_TOKENS);
    const level = config.thinkingConfig?.thinkingLevel?.toUpperCase();
    const thinkingBudget = config.thinkingConfig?.thinkingBudget;
    const thinking = level ? (THOUGHT_TOKENS[level] ?? 96) : typeof thinkingBudget === 'number' ? Math.max(0, Math.min(thinkingBudget, 256)) : 96;
    const thoughtsTokens = Math.max(0, Math.min(cap, thinking));
    return { thoughtsTokens, answerTokens: cap - thoughtsTokens };
  }

  private async plan(call: TextCall): Promise<Plan> {
    const { request, model } = call;
    const contents = request.contents;
    const allText = [textOf(request.systemInstruction?.parts), ...contents.map((c) => textOf(c.parts))].join(' ');
    const directives = parseSandboxDirectives(allText);
    if (directives.fail) throw new TextUpstreamError(500, 'INTERNAL', 'sandbox: the upstream failed ([sandbox:fail])');
    this.checkSignatures(model, contents);

    const config = request.generationConfig ?? {};
    const budget = this.budget(config);
    const promptTokens = approxTokens(textChars(contents) + textChars(request.systemInstruction) + textChars(request.tools)) + 258 * mediaCount(contents);

    const last = contents[contents.length - 1];
    const userText = stripSandboxDirectives(textOf(contents[currentTurnStart(contents)]?.parts)).trim();
    const declarations = (request.tools ?? []).flatMap((t) => t.functionDeclarations ?? []);
    const computerUse = (request.tools ?? []).find((t) => t.computerUse);
    const fcc = request.toolConfig?.functionCallingConfig;
    const toolsAllowed = (fcc?.mode ?? 'AUTO') !== 'NONE' && (declarations.length > 0 || computerUse !== undefined);
    const answeringToolResults = last ? isToolResultContent(last) : false;

    // Every visible part is written against one character budget: 4 characters per token, as counted.
    const out = { charsLeft: budget.answerTokens * 4 };
    const finish = (parts: GeminiPart[], spent = false): Plan => ({
      parts,
      finishReason: spent ? 'MAX_TOKENS' : 'STOP',
      promptTokens,
      thoughtsTokens: budget.thoughtsTokens,
      ...(spent ? { spentTokens: budget.answerTokens } : {}),
      delayMs: directives.delayMs,
    });

    if (toolsAllowed && !answeringToolResults) {
      const allowed = fcc?.allowedFunctionNames;
      const declaration = declarations.find((d) => !allowed || allowed.includes(d.name));
      const name = declaration?.name ?? 'click_at';
      const schema = declaration ? (declaration.parametersJsonSchema ?? declaration.parameters ?? { type: 'object' }) : undefined;
      const count = Math.max(1, Math.min(Number(PARALLEL.exec(allText)?.[1] ?? 1), 8));
      const parts: GeminiPart[] = [];
      for (let i = 0; i < count; i++) {
        const hint = count > 1 ? `${userText.slice(0, 40) || 'sandbox'} #${i + 1}` : userText.slice(0, 60) || 'sandbox';
        const id = `sbx${createHmac('sha256', SIGNING_KEY).update(`${hint}/${i}/${contents.length}`).digest('hex').slice(0, 12)}`;
        // The call's JSON around its arguments counts too; `{}` stands for the arguments.
        const envelope = JSON.stringify({ id, name, args: {} }).length - 2;
        const args = schema === undefined ? { json: '{"x":500,"y":500}', complete: true } : await sampleJson(schema, hint, out.charsLeft - envelope);
        // A call cut by the budget is not returned (Gemini returns no half call): the turn ends at MAX_TOKENS.
        if (!args.complete || envelope + args.json.length > out.charsLeft) return finish(parts, true);
        out.charsLeft -= envelope + args.json.length;
        const functionCall = { id, name, args: JSON.parse(args.json) as Json };
        const part: GeminiPart = { functionCall };
        // Gemini 3: only the first call of a parallel set carries the signature.
        if (i === 0) part.thoughtSignature = sandboxSignature(model, functionCall);
        parts.push(part);
      }
      return finish(parts);
    }

    const parts: GeminiPart[] = [];
    if ((request.tools ?? []).some((t) => t.codeExecution) && !answeringToolResults) {
      const code: GeminiPart[] = [
        { executableCode: { language: 'PYTHON', code: `print(len(${JSON.stringify(userText.slice(0, 40))}))` } },
        { codeExecutionResult: { outcome: 'OUTCOME_OK', output: `${userText.slice(0, 40).length}\n` } },
      ];
      const chars = code.reduce((sum, part) => sum + outputChars(part), 0);
      if (chars > out.charsLeft) return finish([], true);
      out.charsLeft -= chars;
      parts.push(...code);
    }

    const text = new OutputBudget(out.charsLeft);
    if (answeringToolResults) {
      await run(toolResultsAnswer(model, last!, text));
    } else if (config.responseMimeType === 'application/json') {
      const schema = config.responseJsonSchema ?? config.responseSchema;
      if (schema) await run(writeSample(schema, userText.slice(0, 60) || 'sandbox', text));
      else await run(writeAll(text, JSON.stringify({ answer: userText.slice(0, text.limit) || 'sandbox' })));
    } else {
      const words = userText.split(/\s+/).filter(Boolean);
      const answer =
        `Sandbox ${model} answer. You wrote ${words.length} word${words.length === 1 ? '' : 's'}` +
        (words.length ? `, starting with "${words.slice(0, 8).join(' ')}"` : '') +
        `. This reply is deterministic and derived from your input, streamed in several chunks.`;
      await run(writeAll(text, answer));
    }

    let answer = text.text();
    let stopped = false;
    for (const stop of config.stopSequences ?? []) {
      const at = answer.indexOf(stop);
      if (at >= 0) {
        answer = answer.slice(0, at);
        stopped = true;
      }
    }
    parts.push({ text: answer, thoughtSignature: sandboxSignature(model, { name: '#text', args: answer }) });
    // A stop sequence ends the answer before the budget does.
    return finish(parts, text.spent && !stopped);
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
