/** Tool calls replayed by the client and the results it sends back → functionCall / functionResponse. */
import type { GeminiFunctionResponse, GeminiPart } from '../../../../libs/providers/index.js';
import { invalid } from '../text-errors.js';
import { isObject } from './json-readers.js';
import { contentPart } from './media-parts.js';
import { checkBodyDepth } from './schema-limits.js';

export interface KnownCall {
  name: string;
  nativeId?: string;
  /** Where the call stands among the conversation's calls: its result goes in that place. */
  order: number;
}

export function parseArguments(value: unknown, path: string): Record<string, unknown> {
  if (isObject(value)) return value;
  if (typeof value !== 'string') throw invalid(path, 'must be a JSON string');
  if (value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalid(path, 'is not valid JSON');
  }
  if (!isObject(parsed)) throw invalid(path, 'must encode a JSON object');
  checkBodyDepth(parsed, path);
  return parsed;
}

/**
 * A tool result (string, or text plus image parts) → functionResponse. A string that encodes a
 * JSON object is sent as the response object itself (computer use reads `url` and
 * `safety_acknowledgement` there); anything else is `{output: <text>}`.
 */
export function functionResponsePart(call: KnownCall, output: unknown, path: string): GeminiPart {
  const response: GeminiFunctionResponse = { name: call.name, response: {} };
  if (call.nativeId !== undefined) response.id = call.nativeId;
  let text = '';
  const media: Array<{ inlineData: { mimeType: string; data: string } }> = [];
  if (typeof output === 'string') {
    text = output;
  } else if (Array.isArray(output)) {
    output.forEach((part, i) => {
      const translated = contentPart(part, `${path}.${i}`);
      if (translated.text !== undefined) text += translated.text;
      else media.push(translated as { inlineData: { mimeType: string; data: string } });
    });
  } else {
    throw invalid(path, 'must be a string or an array of text and image parts');
  }
  let parsed: unknown;
  try {
    parsed = text.trim().startsWith('{') ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (isObject(parsed)) checkBodyDepth(parsed, path);
  response.response = isObject(parsed) ? parsed : { output: text };
  if (media.length > 0) response.parts = media;
  return { functionResponse: response };
}
