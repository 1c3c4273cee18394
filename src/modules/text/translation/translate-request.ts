/**
 * Validation and translation of both text operations' requests (Chat-Completions-style and
 * Responses-style) into one Gemini `generateContent` request. Pure: no I/O. HTTPS media links
 * become `fileData` parts that the service fetches through the guarded client before the call
 * (see `pendingMediaUrls`). Every refusal is a DomainError thrown before any wallet hold.
 * Each concern lives in its own file of this folder; this one puts them together in order.
 */
import { DomainError } from '../../../../libs/common/index.js';
import { type GeminiRequest, type GeminiTool, isTextModel, MAX_OUTPUT_TOKENS, TEXT_MODEL_IDS } from '../../../../libs/providers/index.js';
import { invalid, TextErrorCode, unsupported } from '../text-errors.js';
import { chatConversation, responsesConversation } from './conversation.js';
import { buildGenerationConfig, maxTokens, reasoningEffort, stopSequences, structuredOutput, vendorOutputCap } from './generation-config.js';
import { deepHas, isObject, type Json, optBoolean, optInteger, optNumber, optObject, optString } from './json-readers.js';
import { MODEL_RULES } from './model-rules.js';
import { checkBodyDepth, checkDeclarationCount } from './schema-limits.js';
import { functionCallingConfig, functionDeclarations } from './tools.js';
import type { TextOperation, TranslatedTextRequest } from './translated-request.js';
import { vendorOptions } from './vendor-options.js';

/** Validates a Chat or Responses request and builds the Gemini request. Throws DomainError. */
export function translateTextRequest(operation: TextOperation, rawBody: unknown): TranslatedTextRequest {
  if (!isObject(rawBody)) throw invalid('body', 'must be a JSON object');
  checkBodyDepth(rawBody);
  const body = rawBody;

  if (body.model === undefined || body.model === null) throw invalid('model', 'is required');
  if (typeof body.model !== 'string') throw invalid('model', 'must be a string');
  if (!isTextModel(body.model)) {
    throw new DomainError(400, TextErrorCode.UnknownModel, `model: unknown model ${JSON.stringify(body.model)}; use one of ${TEXT_MODEL_IDS.join(', ')}`);
  }
  const model = body.model;
  const rules = MODEL_RULES[model];

  // Refusals of unsupported features (422).
  if (body.background === true) throw unsupported(TextErrorCode.BackgroundUnsupported, 'background: background responses are not supported; omit it or send false');
  optBoolean(body, 'background');
  if (body.parallel_tool_calls === false) {
    throw unsupported(TextErrorCode.ParallelToolCallsUnsupported, 'parallel_tool_calls: false is not supported; omit it or send true');
  }
  optBoolean(body, 'parallel_tool_calls');
  const n = optInteger(body, 'n');
  if (n !== undefined && n !== 1) throw unsupported(TextErrorCode.CandidateCountUnsupported, 'n: the number of candidates is fixed at 1');
  const vendor = vendorOptions(body);
  if (deepHas(body, 'streamFunctionCallArguments', (v) => v === true) || deepHas(vendor, 'streamFunctionCallArguments', (v) => v === true)) {
    throw unsupported(TextErrorCode.StreamFunctionCallArgumentsUnsupported, 'streamFunctionCallArguments: true is not supported; function arguments arrive whole');
  }
  const vendorGeneration = (vendor.generationConfig as Json | undefined) ?? {};
  if (vendorGeneration.candidateCount !== undefined && vendorGeneration.candidateCount !== 1) {
    throw unsupported(TextErrorCode.CandidateCountUnsupported, 'providerOptions.vendor.generationConfig.candidateCount: the number of candidates is fixed at 1');
  }
  const vendorThinking = isObject(vendorGeneration.thinkingConfig) ? vendorGeneration.thinkingConfig : undefined;
  if (vendorGeneration.thinkingConfig !== undefined && !vendorThinking) throw invalid('providerOptions.vendor.generationConfig.thinkingConfig', 'must be an object');
  const vendorBudget = vendorThinking?.thinkingBudget;
  if (vendorBudget !== undefined && !rules.thinkingBudget) {
    throw unsupported(TextErrorCode.ThinkingBudgetUnsupported, `providerOptions.vendor.generationConfig.thinkingConfig.thinkingBudget: not supported on ${model}; use reasoning_effort`);
  }

  // Sampling and limits (400 when malformed or out of range; checked on every model).
  const temperature = optNumber(body, 'temperature');
  // The lite model ignores custom temperature (spec model rules), so its value is not judged there;
  // top_p and top_k ranges are the spec's own limits, judged on every model.
  if (temperature !== undefined && !rules.lite && (temperature < 0 || temperature > 2)) throw invalid('temperature', 'must be between 0 and 2');
  const topP = optNumber(body, 'top_p');
  if (topP !== undefined && (topP < 0 || topP > 1)) throw invalid('top_p', 'must be between 0 and 1');
  const topK = optInteger(body, 'top_k');
  if (topK !== undefined && topK < 1) throw invalid('top_k', 'must be at least 1');
  const seed = optInteger(body, 'seed');
  const frequencyPenalty = optNumber(body, 'frequency_penalty');
  const presencePenalty = optNumber(body, 'presence_penalty');
  for (const [key, value] of [['frequency_penalty', frequencyPenalty], ['presence_penalty', presencePenalty]] as const) {
    if (value !== undefined && (value < -2 || value >= 2)) throw invalid(key, 'must be at least -2 and below 2');
  }
  // max_tokens wins over the vendor block's maxOutputTokens; either sizes the hold.
  const vendorCap = vendorOutputCap(vendorGeneration, model);
  const outputCap = maxTokens(body, model) ?? vendorCap;
  const stop = stopSequences(body);
  const stream = optBoolean(body, 'stream') ?? false;
  const streamOptions = optObject(body, 'stream_options');
  const includeUsage = streamOptions ? (optBoolean(streamOptions, 'include_usage', 'stream_options.include_usage') ?? false) : false;

  if (rules.lite && (frequencyPenalty !== undefined || presencePenalty !== undefined || vendorGeneration.frequencyPenalty !== undefined || vendorGeneration.presencePenalty !== undefined)) {
    throw unsupported(TextErrorCode.PenaltiesUnsupported, `frequency_penalty and presence_penalty are not supported on ${model}`);
  }

  // Reasoning level.
  const effort = reasoningEffort(body, operation);
  const vendorLevel = typeof vendorThinking?.thinkingLevel === 'string' ? vendorThinking.thinkingLevel.toLowerCase() : undefined;
  for (const [label, level] of [['reasoning_effort', effort], ['providerOptions.vendor.generationConfig.thinkingConfig.thinkingLevel', vendorLevel]] as const) {
    if (level !== undefined && !(rules.levels as string[]).includes(level)) {
      throw unsupported(TextErrorCode.ReasoningEffortUnsupported, `${label}: ${JSON.stringify(level)} is not supported on ${model}; use one of ${rules.levels.join(', ')}`);
    }
  }

  // Conversation.
  const instructions = optString(body, 'instructions');
  if (operation === 'chat' && body.messages === undefined) throw invalid('messages', 'is required');
  if (operation === 'responses' && body.input === undefined) throw invalid('input', 'is required');
  const conversation = operation === 'chat' ? chatConversation(body.messages) : responsesConversation(body.input, instructions);
  if (conversation.contents.length === 0) throw invalid(operation === 'chat' ? 'messages' : 'input', 'needs at least one user message');
  if (rules.lite && conversation.lastRole === 'assistant') {
    throw unsupported(TextErrorCode.FinalAssistantMessageUnsupported, `${model} does not accept a conversation whose final non-system message has the assistant role`);
  }

  // Tools.
  const declarations = functionDeclarations(body.tools, operation);
  const vendorTools = (vendor.tools as GeminiTool[] | undefined) ?? [];
  checkDeclarationCount(declarations.length + vendorTools.reduce((n, tool) => n + (Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations.length : 0), 0));
  const fcc = functionCallingConfig(body.tool_choice, declarations, declarations.length > 0 || vendorTools.length > 0);

  // Structured output.
  const format =
    operation === 'chat'
      ? structuredOutput(optObject(body, 'response_format'), 'response_format', true)
      : structuredOutput(optObject(optObject(body, 'text') ?? {}, 'format', 'text.format'), 'text.format', false);

  // generationConfig: the vendor block first, normalized fields win.
  const generationConfig = buildGenerationConfig({
    vendorGeneration,
    vendorThinking,
    format,
    sampling: { temperature, topP, topK, maxOutputTokens: outputCap, stopSequences: stop, seed, frequencyPenalty, presencePenalty },
    rules,
    effort,
    vendorLevel,
  });
  const thinking = generationConfig.thinkingConfig!;

  const gemini: GeminiRequest = { contents: conversation.contents };
  if (conversation.system.length > 0) gemini.systemInstruction = { parts: conversation.system };
  const tools: GeminiTool[] = [];
  if (declarations.length > 0) tools.push({ functionDeclarations: declarations });
  tools.push(...vendorTools);
  if (tools.length > 0) gemini.tools = tools;
  const vendorToolConfig = (vendor.toolConfig as Json | undefined) ?? {};
  const vendorFcc = isObject(vendorToolConfig.functionCallingConfig) ? vendorToolConfig.functionCallingConfig : {};
  if (Object.keys(vendorToolConfig).length > 0 || Object.keys(fcc).length > 0) {
    const merged = { ...vendorFcc, ...fcc };
    // tool_choice wins; the vendor's allowed names refine only a mode that allows them (ANY).
    if (fcc.mode !== undefined && fcc.mode !== 'ANY') delete merged.allowedFunctionNames;
    gemini.toolConfig = { ...vendorToolConfig };
    if (Object.keys(merged).length > 0) gemini.toolConfig.functionCallingConfig = merged;
  }
  if (vendor.safetySettings) gemini.safetySettings = vendor.safetySettings as unknown[];
  gemini.generationConfig = generationConfig;

  const echo: Record<string, unknown> = {
    instructions: instructions ?? null,
    metadata: isObject(body.metadata) ? body.metadata : {},
    parallel_tool_calls: true,
    temperature: temperature ?? null,
    top_p: topP ?? null,
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    max_output_tokens: outputCap ?? null,
    text: isObject(body.text) ? body.text : { format: { type: 'text' } },
    reasoning: { effort: effort ?? (thinking.thinkingLevel as string | undefined)?.toLowerCase() ?? null, summary: null },
    previous_response_id: null,
    truncation: 'disabled',
    user: typeof body.user === 'string' ? body.user : null,
  };

  return {
    operation,
    model,
    stream,
    includeUsage,
    gemini,
    maxOutputTokens: outputCap ?? MAX_OUTPUT_TOKENS,
    echo,
  };
}
