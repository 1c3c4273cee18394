/** Replayed `providerMetadata.vendor.parts`: how an earlier model turn comes back upstream. */
import type { GeminiPart } from '../../../../libs/providers/index.js';
import { invalid } from '../text-errors.js';
import { isObject, type Json } from './json-readers.js';
import { mediaPart } from './media-parts.js';

/**
 * Replayed parts take precedence over the message's reconstructed content, unless they are visibly
 * only the end of a streamed turn: fewer functionCall parts than tool calls, or text that is a strict
 * tail of the message's text. That is what a client keeps when it does not concatenate the chunks'
 * parts (the `openai` SDK's stream helper keeps the last chunk's `providerMetadata` only); the turn
 * is then rebuilt from `content` and `tool_calls`, whose `extra_content.vendor` carries every
 * signature, instead of silently losing calls or text.
 */
export function completeReplay(replayed: GeminiPart[] | null, toolCallCount: number, content: unknown): GeminiPart[] | null {
  if (!replayed) return null;
  const calls = replayed.filter((p) => isObject(p.functionCall)).length;
  // The message's visible text is the concatenation of the turn's non-thought text parts.
  const replayedText = replayed.map((p) => (typeof p.text === 'string' && p.thought !== true ? p.text : '')).join('');
  const messageText =
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : '')).join('') : '';
  // Only the stream's last parts kept: their text is a strict tail of the message's text.
  const onlyTheTail = replayedText !== messageText && messageText.endsWith(replayedText);
  return calls >= toolCallCount && !onlyTheTail ? replayed : null;
}

/** Replayed `providerMetadata.vendor.parts`, unchanged (they take precedence). */
export function replayedParts(holder: Json, path: string): GeminiPart[] | null {
  const metadata = holder.providerMetadata;
  if (metadata === undefined || metadata === null) return null;
  if (!isObject(metadata)) throw invalid(`${path}.providerMetadata`, 'must be an object');
  const vendor = metadata.vendor;
  if (vendor === undefined || vendor === null) return null;
  if (!isObject(vendor)) throw invalid(`${path}.providerMetadata.vendor`, 'must be an object');
  if (vendor.parts === undefined || vendor.parts === null) return null;
  if (!Array.isArray(vendor.parts)) throw invalid(`${path}.providerMetadata.vendor.parts`, 'must be an array');
  if (vendor.parts.length === 0) return null;
  vendor.parts.forEach((part, i) => {
    if (!isObject(part)) throw invalid(`${path}.providerMetadata.vendor.parts.${i}`, 'must be an object');
    scanReplayedPart(part, `${path}.providerMetadata.vendor.parts.${i}`);
  });
  return vendor.parts as GeminiPart[];
}

/**
 * Replayed parts go upstream byte for byte, except their file references, which follow the
 * rules of any media link: an HTTPS URL stays a `fileData` part that the service fetches through
 * the guarded client and inlines; a data URL becomes inline bytes (the upstream takes no data
 * URL as a file URI); gs:// is the usual 422; any other scheme (file:, ftp:, a leading space …)
 * is a 400. The snake_case spelling is refused so no reference can slip past these rules.
 */
function scanReplayedPart(part: Json, path: string): void {
  replayedFileReference(part, path);
  const response = part.functionResponse;
  if (part.function_response !== undefined) throw invalid(`${path}.function_response`, 'send functionResponse, as the service returned it');
  if (isObject(response) && Array.isArray(response.parts)) {
    response.parts.forEach((inner, j) => {
      if (isObject(inner)) replayedFileReference(inner, `${path}.functionResponse.parts.${j}`);
    });
  }
}

function replayedFileReference(part: Json, path: string): void {
  if (part.file_data !== undefined) throw invalid(`${path}.file_data`, 'send fileData, as the service returned it');
  const reference = part.fileData;
  if (reference === undefined) return;
  if (!isObject(reference)) throw invalid(`${path}.fileData`, 'must be an object');
  const mimeType = typeof reference.mimeType === 'string' ? reference.mimeType : undefined;
  const media = mediaPart(reference.fileUri, 'file', `${path}.fileData.fileUri`, mimeType);
  delete part.fileData;
  Object.assign(part, media);
}
