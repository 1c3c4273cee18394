/** The request's generation settings: output cap, stop sequences, reasoning effort, structured output. */
import { type GeminiGenerationConfig, MAX_OUTPUT_TOKENS, type TextModelId } from '../../../../libs/providers/index.js';
import { invalid } from '../text-errors.js';
import { isObject, type Json, optInteger } from './json-readers.js';
import { checkSchemaLimits } from './schema-limits.js';
import type { ModelRule } from './model-rules.js';
import type { TextOperation } from './translated-request.js';

/** The generationConfig fields of an explicit output format; undefined when none was asked. */
export function structuredOutput(format: Json | undefined, path: string, nested: boolean): Partial<GeminiGenerationConfig> | undefined {
  if (!format) return undefined;
  switch (format.type) {
    case 'text':
      return {};
    case 'json_object':
      return { responseMimeType: 'application/json' };
    case 'json_schema': {
      const holder = nested ? format.json_schema : format;
      if (!isObject(holder)) throw invalid(`${path}.json_schema`, 'must be an object');
      if (!isObject(holder.schema)) throw invalid(`${path}${nested ? '.json_schema' : ''}.schema`, 'must be a JSON schema object');
      checkSchemaLimits(holder.schema, `${path}${nested ? '.json_schema' : ''}.schema`);
      return { responseMimeType: 'application/json', responseJsonSchema: holder.schema };
    }
    default:
      throw invalid(`${path}.type`, 'must be text, json_object or json_schema');
  }
}

export function reasoningEffort(body: Json, operation: TextOperation): string | undefined {
  const flat = body.reasoning_effort;
  const nested = operation === 'responses' && isObject(body.reasoning) ? body.reasoning.effort : undefined;
  const value = flat ?? nested ?? undefined;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid('reasoning_effort', 'must be a string');
  return value;
}

export function maxTokens(body: Json, model: TextModelId): number | undefined {
  let value: number | undefined;
  for (const key of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const given = optInteger(body, key);
    if (given === undefined) continue;
    if (given < 1) throw invalid(key, 'must be at least 1');
    if (given > MAX_OUTPUT_TOKENS) throw invalid(key, `must be at most ${MAX_OUTPUT_TOKENS} for ${model}`);
    value ??= given;
  }
  return value;
}

const VENDOR_GENERATION = 'providerOptions.vendor.generationConfig';

/**
 * The vendor block's sampling fields held to the spec's limits, as their normalized names are
 * (top_p 0 to 1, top_k and the output cap at least 1, the cap at most the model's): the vendor
 * block reaches the upstream as sent, and its output cap sizes the hold when max_tokens is not
 * given (the hold is the most the request can cost; DESIGN §6). Returns that cap.
 */
export function vendorOutputCap(vendorGeneration: Json, model: TextModelId): number | undefined {
  const { topP, topK, maxOutputTokens } = vendorGeneration;
  if (topP !== undefined && !(typeof topP === 'number' && topP >= 0 && topP <= 1)) throw invalid(`${VENDOR_GENERATION}.topP`, 'must be a number between 0 and 1');
  if (topK !== undefined && !(Number.isInteger(topK) && (topK as number) >= 1)) throw invalid(`${VENDOR_GENERATION}.topK`, 'must be an integer of at least 1');
  if (maxOutputTokens === undefined) return undefined;
  if (!(Number.isInteger(maxOutputTokens) && (maxOutputTokens as number) >= 1 && (maxOutputTokens as number) <= MAX_OUTPUT_TOKENS)) {
    throw invalid(`${VENDOR_GENERATION}.maxOutputTokens`, `must be an integer from 1 to ${MAX_OUTPUT_TOKENS} for ${model}`);
  }
  return maxOutputTokens as number;
}

export function stopSequences(body: Json): string[] | undefined {
  const stop = body.stop;
  if (stop === undefined || stop === null) return undefined;
  const list = typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string' || s.length === 0)) throw invalid('stop', 'must be a non-empty string or an array of non-empty strings');
  if (list.length > 5) throw invalid('stop', 'at most 5 stop sequences');
  return list as string[];
}

/** What the request's normalized fields say; each wins over the vendor block's value. */
type Sampling = Pick<GeminiGenerationConfig, 'temperature' | 'topP' | 'topK' | 'maxOutputTokens' | 'stopSequences' | 'seed' | 'frequencyPenalty' | 'presencePenalty'>;

/**
 * The Gemini generationConfig: the vendor block first, the normalized fields over it, then the
 * model's rules (one candidate; no custom sampling on the lite model; a thinking level unless the
 * vendor block sets a budget, because Gemini refuses level + budget).
 */
export function buildGenerationConfig(given: {
  vendorGeneration: Json;
  vendorThinking: Json | undefined;
  format: Partial<GeminiGenerationConfig> | undefined;
  sampling: Sampling;
  rules: ModelRule;
  effort: string | undefined;
  vendorLevel: string | undefined;
}): GeminiGenerationConfig {
  const { vendorGeneration, vendorThinking, format, sampling, rules, effort, vendorLevel } = given;
  const generationConfig: GeminiGenerationConfig = { ...vendorGeneration };
  if (format) {
    // An explicit response_format / text.format decides the output format alone.
    delete generationConfig.responseMimeType;
    delete generationConfig.responseSchema;
    delete generationConfig.responseJsonSchema;
  }
  for (const [key, value] of Object.entries(sampling)) {
    if (value !== undefined) (generationConfig as Json)[key] = value;
  }
  Object.assign(generationConfig, format);
  generationConfig.candidateCount = 1;
  if (rules.lite) {
    // Custom sampling is ignored on the lite model (spec model rules).
    delete generationConfig.temperature;
    delete generationConfig.topP;
    delete generationConfig.topK;
  }
  const thinking = { ...(vendorThinking ?? {}) };
  if (effort !== undefined) {
    thinking.thinkingLevel = effort.toUpperCase();
    delete thinking.thinkingBudget;
  } else if (vendorLevel !== undefined) {
    thinking.thinkingLevel = vendorLevel.toUpperCase();
  } else if (thinking.thinkingBudget === undefined) {
    thinking.thinkingLevel = rules.defaultLevel.toUpperCase();
  }
  generationConfig.thinkingConfig = thinking;
  return generationConfig;
}
