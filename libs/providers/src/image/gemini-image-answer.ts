/**
 * A Gemini image answer (UPSTREAM §1.7, §1.13) → an outcome. The first inline image of the
 * first candidate that is not a thought (Gemini 3 may show draft "thought" images) is the
 * result, with the candidate's non-thought text. Without one: a blocked prompt or a safety
 * finish reason is a safety refusal, anything else (NO_IMAGE, IMAGE_OTHER, IMAGE_RECITATION,
 * text only) is `no_image`.
 */
import type { GeminiResponse } from '../text/gemini-types.js';
import type { ImageOutcome } from './image-provider.js';

/** Finish reasons that mean the picture or the prompt was judged unsafe. */
const SAFETY_FINISH_REASONS = new Set(['SAFETY', 'IMAGE_SAFETY', 'PROHIBITED_CONTENT', 'IMAGE_PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII']);

export function readImageAnswer(answer: GeminiResponse): ImageOutcome {
  const blockReason = answer.promptFeedback?.blockReason;
  if (blockReason) return { kind: 'refused', category: 'safety', reason: `the prompt was blocked (${blockReason})` };
  const candidate = answer.candidates?.[0];
  const parts = (candidate?.content?.parts ?? []).filter((part) => part.thought !== true);
  const text = parts
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .join('')
    .trim();
  const image = parts.find((part) => part.inlineData?.mimeType?.startsWith('image/') && part.inlineData.data);
  const usage = answer.usageMetadata;
  if (image?.inlineData) {
    return {
      kind: 'succeeded',
      image: { mimeType: image.inlineData.mimeType, bytes: Buffer.from(image.inlineData.data, 'base64') },
      ...(text ? { text } : {}),
      ...(usage ? { usage: { inputTokens: usage.promptTokenCount, outputTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0) } } : {}),
    };
  }
  const finishReason = candidate?.finishReason ?? 'NO_CANDIDATE';
  const detail = candidate?.finishMessage ?? (text ? `the model answered with text only: ${text.slice(0, 200)}` : 'the model answered without an image');
  const category = SAFETY_FINISH_REASONS.has(finishReason) ? 'safety' : 'no_image';
  return { kind: 'refused', category, reason: `${finishReason}: ${detail}` };
}
