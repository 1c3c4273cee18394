import type { GeminiRequest, TextModelId } from '../../../../libs/providers/index.js';

export type TextOperation = 'chat' | 'responses';

export interface TranslatedTextRequest {
  operation: TextOperation;
  model: TextModelId;
  stream: boolean;
  /** Chat: `stream_options.include_usage`. */
  includeUsage: boolean;
  gemini: GeminiRequest;
  /** The output cap the wallet hold covers. */
  maxOutputTokens: number;
  /** Responses-style: request fields echoed on the response object. */
  echo: Record<string, unknown>;
}
