import { TEXT_MODEL_IDS } from '../../../libs/providers/index.js';
import { namedSchema, type SchemaObject } from '../../app/openapi-schemas.js';

/**
 * OpenAPI descriptions of the text bodies. They document the contract (spec, Text generation);
 * they do not validate: translateTextRequest does, by hand, because OpenAI clients send fields
 * we accept and ignore (hence `additionalProperties: true`) and message shapes are polymorphic.
 */

const model: SchemaObject = { type: 'string', enum: [...TEXT_MODEL_IDS] };
const reasoningEffort: SchemaObject = { type: 'string', enum: ['minimal', 'low', 'medium', 'high'], description: 'per-model levels: docs/text.md' };
const stop: SchemaObject = { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 5 }] };
const toolChoice: SchemaObject = {
  oneOf: [{ type: 'string', enum: ['auto', 'none', 'required'] }, { type: 'object', description: 'a named function declared in `tools`: `{type: "function", function: {name}}` or `{type: "function", name}`' }],
};
const providerOptions: SchemaObject = {
  type: 'object',
  properties: {
    vendor: {
      type: 'object',
      description: 'Advanced Gemini `generationConfig`, `safetySettings`, `tools` (codeExecution, computerUse), `toolConfig`, in camelCase or snake_case; the normalized fields win',
    },
  },
};
const sampling: Record<string, SchemaObject> = {
  temperature: { type: 'number', minimum: 0, maximum: 2 },
  top_p: { type: 'number', minimum: 0, maximum: 1 },
  top_k: { type: 'integer', minimum: 1 },
  max_tokens: { type: 'integer', minimum: 1, maximum: 65_536 },
  max_completion_tokens: { type: 'integer', minimum: 1, maximum: 65_536, description: 'alias of max_tokens' },
  seed: { type: 'integer', description: 'best effort' },
  stop,
  reasoning_effort: reasoningEffort,
  parallel_tool_calls: { type: 'boolean', description: 'omit or true; false is refused' },
  tool_choice: toolChoice,
  providerOptions,
};
const usage: SchemaObject = {
  type: 'object',
  properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
};

export const CHAT_REQUEST_SCHEMA = namedSchema('ChatCompletionRequest', {
  type: 'object',
  required: ['model', 'messages'],
  additionalProperties: true,
  properties: {
    model,
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
          content: {
            oneOf: [
              { type: 'string' },
              { type: 'array', items: { type: 'object', description: 'text, image_url, input_audio, video, input_file (file_data as a data URL) parts' } },
            ],
          },
          tool_calls: { type: 'array', items: { type: 'object' } },
          tool_call_id: { type: 'string' },
          providerMetadata: { type: 'object', description: 'replay unchanged: vendor.parts with thought signatures' },
        },
      },
    },
    stream: { type: 'boolean', default: false },
    stream_options: { type: 'object', properties: { include_usage: { type: 'boolean' } } },
    response_format: { type: 'object', description: '`{type: "json_object"}` or `{type: "json_schema", json_schema: {name, schema}}`' },
    frequency_penalty: { type: 'number', minimum: -2, maximum: 2, description: 'refused on vendor-3.5-flash-lite' },
    presence_penalty: { type: 'number', minimum: -2, maximum: 2, description: 'refused on vendor-3.5-flash-lite' },
    n: { type: 'integer', enum: [1] },
    tools: { type: 'array', items: { type: 'object', description: '`{type: "function", function: {name, description, parameters}}`' } },
    ...sampling,
  },
});

export const RESPONSES_REQUEST_SCHEMA = namedSchema('ResponseRequest', {
  type: 'object',
  required: ['model', 'input'],
  additionalProperties: true,
  properties: {
    model,
    input: {
      oneOf: [
        { type: 'string' },
        {
          type: 'array',
          items: {
            type: 'object',
            description: 'messages (`role`, `content` of input_text / input_image / input_video / input_audio / input_file parts), returned output items, `function_call_output` items',
          },
        },
      ],
    },
    instructions: { type: 'string' },
    stream: { type: 'boolean', default: false },
    background: { type: 'boolean', enum: [false] },
    max_output_tokens: { type: 'integer', minimum: 1, maximum: 65_536 },
    reasoning: { type: 'object', properties: { effort: reasoningEffort } },
    text: { type: 'object', properties: { format: { type: 'object', description: '`json_object` or `json_schema` structured output' } } },
    tools: { type: 'array', items: { type: 'object', description: '`{type: "function", name, description, parameters}`' } },
    ...sampling,
  },
});

export const CHAT_RESPONSE_SCHEMA = namedSchema('ChatCompletion', {
  type: 'object',
  description: 'JSON when `stream` is false; `text/event-stream` of chat.completion.chunk objects ending with `data: [DONE]` when true',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['chat.completion'] },
    created: { type: 'integer' },
    model,
    choices: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer' },
          message: { type: 'object', properties: { role: { type: 'string' }, content: { type: 'string', nullable: true }, tool_calls: { type: 'array', items: { type: 'object' } } } },
          finish_reason: { type: 'string' },
        },
      },
    },
    usage,
  },
});

export const RESPONSE_SCHEMA = namedSchema('Response', {
  type: 'object',
  description: 'JSON when `stream` is false; typed `text/event-stream` events ending with one terminal event when true',
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['response'] },
    created_at: { type: 'integer' },
    status: { type: 'string', enum: ['in_progress', 'completed', 'incomplete', 'failed'] },
    model,
    output: { type: 'array', items: { type: 'object', description: '`message` and `function_call` items, with providerMetadata' } },
    output_text: { type: 'string' },
    usage: { type: 'object', properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } } },
  },
});

const modelObject: SchemaObject = {
  type: 'object',
  properties: { id: model, object: { type: 'string', enum: ['model'] }, created: { type: 'integer' }, owned_by: { type: 'string' } },
};
export const MODEL_SCHEMA = namedSchema('TextModel', modelObject);
export const MODEL_LIST_SCHEMA = namedSchema('TextModelList', {
  type: 'object',
  properties: { object: { type: 'string', enum: ['list'] }, data: { type: 'array', items: MODEL_SCHEMA } },
});

/**
 * The streamed answers (`stream: true`): one `data:` line per event. Chat-style chunks end with
 * `data: [DONE]`; Responses-style typed events end with one terminal event (spec › Text streaming).
 */
export const CHAT_STREAM_SCHEMA = namedSchema('ChatCompletionStream', {
  type: 'string',
  description: '`data: <chat.completion.chunk JSON>` lines; a final chunk with empty `choices` carries `usage`; then `data: [DONE]` after settlement. An `error` event without `[DONE]` is an incomplete stream',
});
export const RESPONSE_STREAM_SCHEMA = namedSchema('ResponseStream', {
  type: 'string',
  description: '`event: <type>` / `data: <JSON>` pairs: response.created, response.in_progress, output item, text and function-call-argument deltas and done events, then one of response.completed, response.incomplete, response.failed (or `event: error`). No `[DONE]`',
});
