import type { GeminiRequest } from '../../../../libs/providers/index.js';
import { isObject } from './json-readers.js';

/**
 * Conservative input-token estimate for the wallet hold: text at 3 characters per token (real
 * tokenizers give about 4), and each media part at the larger of 1,120 tokens and one token per
 * 64 bytes. Settlement uses the upstream's own counts.
 */
export function estimateInputTokens(request: GeminiRequest): number {
  let chars = 0;
  let tokens = 0;
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      chars += value.length;
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isObject(value)) return;
    for (const [key, child] of Object.entries(value)) {
      if ((key === 'inlineData' || key === 'fileData') && isObject(child)) {
        const bytes = typeof child.data === 'string' ? Math.floor((child.data.length * 3) / 4) : 0;
        tokens += Math.max(1120, Math.ceil(bytes / 64));
        continue;
      }
      if (key === 'thoughtSignature') continue;
      visit(child);
    }
  };
  visit(request.contents);
  visit(request.systemInstruction);
  visit(request.tools);
  return tokens + Math.ceil(chars / 3) + 8;
}
